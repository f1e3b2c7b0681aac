/**
 * The sandbox step of a run plan (src/exec/plan.ts): wrap {program, args} in bubblewrap per the turn's
 * SandboxPolicy (the preflight reply's `sandbox`), or per the pre-flight's overall escalation. Pure apart from the injected FsView; apply it before
 * the exec-gate step (which lets the command after `--` through once).
 * danger-full-access (and an external sandbox with network) leaves the plan as it is, and needs no bwrap.
 * Errors (bwrap missing, a writable root missing) are SandboxErrors: the caller reports them and runs
 * nothing.
 */
import {
  BRIDGE_PROGRAM,
  bridgeCommand,
  type CommandLine,
  type FsView,
  gateGuard,
  gateSandboxContext,
  networkRules,
  proxyEnv,
  runProxySocket,
  sandboxArgvFor,
  type SandboxPolicy,
  wrapCommand,
  type SecretsSetting,
} from '../sandbox/index.js';
import { type Env, gatePaths, type GatePaths } from '../paths/index.js';
import type { EscalationExecution } from '../protocol/index.js';
import { dirname, join } from 'node:path';

export interface SandboxStepOptions {
  policy: SandboxPolicy;
  /** the pre-flight's overall Escalate, if any: Unsandboxed → as is, Permissions → exactly the profile;
   *  absent or TurnDefault → the turn's sandbox */
  execution?: EscalationExecution;
  /** gate-sh's environment (GATE_HOME, CODEX_HOME, XDG_RUNTIME_DIR, TMPDIR) */
  env: Env;
  /** an interactive session keeps its terminal: no `--new-session` (docs/sandbox.md) */
  interactive?: boolean;
  /** the bubblewrap binary; called only when wrapping (findBwrap in sandbox-run.ts) */
  bwrap: () => string;
  fs?: FsView;
  /** more files to keep read-only: rule files and audit log named in the config */
  protectedExtra?: readonly string[];
  /** the daemon's [secrets] setting (the pre-flight reply's); the default list of hidden credential
   *  locations applies without it (src/sandbox/secrets.ts) */
  secrets?: SecretsSetting;
  /** network "rules": the run whose proxy the sandbox reaches, and the shims folder with gate-netbridge;
   *  without a run id such a sandbox has no network at all */
  network?: { runId: string; shimsDir: string };
  /** the run's own client folder (src/paths/paths.ts runClientDir), the only one its sandbox sees */
  clientDir?: string;
  /** gatePaths(env), when the caller worked them out for this plan already (each asks the filesystem) */
  paths?: GatePaths;
}

/** `guard`: a run without a sandbox gets the gate's guard instead (src/sandbox/gate-state.ts), applied by
 * the exec gate's launcher; not under an external sandbox, whose outer sandbox is in charge. */
export function withSandbox<T extends CommandLine & { cwd: string }>(plan: T, o: SandboxStepOptions): T & { sandboxed: boolean; guard?: string } {
  const ctx = gateSandboxContext({
    cwd: plan.cwd,
    env: o.env,
    fs: o.fs,
    newSession: !o.interactive,
    protectedExtra: o.protectedExtra,
    secrets: o.secrets,
    clientDir: o.clientDir,
    paths: o.paths,
  });
  const execution = o.execution ?? { type: 'TurnDefault' };
  // network "rules" in the turn sandbox: the run's proxy folder bound in, the bridge before the command
  const proxied = execution.type === 'TurnDefault' && networkRules(o.policy) && o.network !== undefined;
  const socket = proxied ? runProxySocket((o.paths ?? gatePaths(o.env)).sessionDir, o.network!.runId) : undefined;
  if (socket) ctx.networkProxyDir = dirname(socket);
  const bwrapArgs = sandboxArgvFor(execution, o.policy, ctx);
  if (bwrapArgs === null) return { ...plan, sandboxed: false, ...(o.policy.type === 'external-sandbox' ? {} : { guard: gateGuard(ctx) }) };
  const command = [plan.program, ...plan.args];
  const line = wrapCommand(socket ? bridgeCommand(join(o.network!.shimsDir, BRIDGE_PROGRAM), socket, command) : command, bwrapArgs, o.bwrap());
  const env = socket && plan.env ? { ...plan.env, ...proxyEnv() } : plan.env;
  return { ...plan, program: line.program, args: line.args, sandboxed: true, ...(env ? { env } : {}) };
}
