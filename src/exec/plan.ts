/**
 * How the checked script reaches the real bash: a pure function from the preflight reply, the invocation
 * and the environment to {program, args, env, cwd}. Later steps wrap the result without touching it:
 * the exec gate adds LD_PRELOAD / socket paths / PATH shims to `env`, the sandbox wraps `program`+`args`
 * in bwrap per `reply.sandbox`.
 *
 * Small scripts go as `bash -c SCRIPT NAME ARGS...`. A script that cannot be one argv string (Linux caps a
 * single argument at 128 KiB; NUL bytes cannot be in argv) is read by bash as a script file from a
 * descriptor N: `bash /dev/fd/N ARGS...`, with a one-line prelude on the script's first line (so line
 * numbers hold) that closes N, sets $0 (BASH_ARGV0) and only then turns on -x/-v, so the prelude is not
 * traced. Diagnostics then name /dev/fd/N instead of $0.
 */
import type { Action, PreflightReply } from '../protocol/index.js';
import type { ShellInvocation } from './gate-sh-args.js';
import { gatePaths, type GatePaths, runClientDir } from '../paths/index.js';
import { SHIMS_DIR, withExecGate } from './exec-gate.js';
import { withSandbox } from './sandbox-step.js';
import { findBwrap } from './sandbox-run.js';
import type { CommandLine, FsView } from '../sandbox/index.js';
import { startUpPrefix, type StartUpFds } from './start-up-gate.js';
import { shellCommand, shellWord } from '../text/index.js';

/** Linux MAX_ARG_STRLEN is 131072 bytes including the terminating NUL. */
export const MAX_ARG_SCRIPT = 128 * 1024 - 1;

/** The plan of one run, built in the client's memory (or the daemon's, for the native gate-sh: client-plan.ts):
 * a command line with every field set, and what the client sets up around it. */
export interface RunPlan extends CommandLine {
  env: Record<string, string>;
  cwd: string;
  /** descriptors above 2 that gate-sh inherited; passed through at the same numbers, as bash would */
  fds: number[];
  /** a large script: the descriptor bash reads it from, and its bytes */
  scriptFd?: { fd: number; data: Buffer };
  /** program is bubblewrap around bash (signals go to bash, not to bwrap: src/exec/sandbox-signals.ts) */
  sandboxed?: boolean;
  /** the run has a start-up phase: bash's ends of the two pipes (src/exec/start-up-gate.ts) */
  startUp?: StartUpFds;
}

export interface PlanInput {
  /** `action`: an overall Escalate (every subcommand explicitly allowed, or an approved escalation) runs
   *  the script as that execution; otherwise it runs in the turn's sandbox */
  reply: Pick<PreflightReply, 'run_id' | 'sandbox' | 'secrets'> & { action?: Action };
  invocation: ShellInvocation;
  /** the exact script text the daemon checked */
  script: string;
  /** the script's bytes when they are not UTF-8 (`script` is then their faithful reading): bash reads exactly
   * these, from a descriptor (argv strings cannot carry them from Node) */
  scriptBytes?: Buffer;
  env: Record<string, string | undefined>;
  cwd: string;
  /** absolute path of the real bash */
  bash: string;
  /** descriptors above 2 gate-sh inherited from its caller (e.g. make's jobserver) */
  inheritedFds?: number[];
  /** the daemon granted a start-up phase: prefix the script with the hand-over (src/exec/start-up-gate.ts) */
  startUp?: boolean;
  /** the sandbox step's lookups (default: bwrap on PATH, the real filesystem); interactive keeps the terminal */
  sandbox?: { bwrap?: () => string; fs?: FsView; interactive?: boolean };
  /** the client's shims folder (default: this installation's) */
  shimsDir?: string;
  /** gatePaths(env), when the caller worked them out for this plan already (each asks the filesystem) */
  paths?: GatePaths;
}

export function needsDescriptor(script: string): boolean {
  return Buffer.byteLength(script, 'utf8') > MAX_ARG_SCRIPT || script.includes('\0');
}

/**
 * The plan inside the turn's sandbox (reply.sandbox; src/exec/sandbox-step.ts), then with the exec gate
 * (every exec of the run checked by the daemon; src/exec/exec-gate.ts). Throws a SandboxError when the
 * sandbox cannot be built (bwrap missing, the cwd gone): nothing runs.
 */
export function planRun(p: PlanInput): RunPlan {
  // the run's own client folder, which the daemon made for it (src/daemon/client-folders.ts): its sandbox's
  // only one, and where its exec gate binds its reply sockets
  const paths = p.paths ?? gatePaths(p.env);
  const clientDir = runClientDir(paths, p.reply.run_id);
  const sandboxed = withSandbox(basePlan(p), {
    policy: p.reply.sandbox,
    execution: p.reply.action?.type === 'Escalate' ? p.reply.action.execution : undefined,
    env: p.env,
    bwrap: p.sandbox?.bwrap ?? (() => findBwrap(p.env)),
    fs: p.sandbox?.fs,
    interactive: p.sandbox?.interactive,
    secrets: p.reply.secrets,
    network: { runId: p.reply.run_id, shimsDir: p.shimsDir ?? SHIMS_DIR },
    clientDir,
    paths,
  });
  return withExecGate(sandboxed, { paths: { ...paths, clientDir }, runId: p.reply.run_id, parentPid: 0, shimsDir: p.shimsDir });
}

function basePlan(p: PlanInput): RunPlan {
  const inv = p.invocation;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.env)) if (v !== undefined) env[k] = v;
  env.GATE_RUN = p.reply.run_id;

  const opts: string[] = [...inv.longOptions];
  if (inv.login) opts.push('-l');
  if (inv.interactive) opts.push('-i');
  const big = needsDescriptor(p.script) || p.scriptBytes !== undefined;
  // for a large script, move xtrace/verbose into the script so the `. /dev/fd/3` wrapper is not traced
  const inner: string[] = [];
  for (let i = 0; i < inv.setOptions.length; i++) {
    const o = inv.setOptions[i];
    const takesArg = o === '-o' || o === '+o';
    const group = takesArg ? [o, inv.setOptions[++i]] : [o];
    const traced = o === '-x' || o === '-v' || (takesArg && (group[1] === 'xtrace' || group[1] === 'verbose'));
    if (big && traced) inner.push(...group);
    else opts.push(...group);
  }
  opts.push(...inv.shoptOptions);

  const fds = p.inheritedFds ?? [];
  const fd = Math.max(2, ...fds) + 1; // a free number: inherited descriptors keep theirs
  // the start-up pipes after the script's descriptor (free numbers too)
  const startUp: StartUpFds | undefined = p.startUp ? { ready: fd + 1, go: fd + 2 } : undefined;
  const prefix = startUp ? startUpPrefix(startUp) : '';
  if (!big) return { program: p.bash, args: [...opts, '-c', prefix + p.script, inv.name, ...inv.args], env, cwd: p.cwd, fds, startUp };
  const prelude = `exec ${fd}<&-; BASH_ARGV0=${shellWord(inv.name)};${inner.length ? ` set ${shellCommand(inner)};` : ''} ${prefix}`;
  return {
    program: p.bash,
    args: [...opts, `/dev/fd/${fd}`, ...inv.args],
    env,
    cwd: p.cwd,
    fds,
    scriptFd: { fd, data: p.scriptBytes ? Buffer.concat([Buffer.from(prelude, 'utf8'), p.scriptBytes]) : Buffer.from(prelude + p.script, 'utf8') },
    startUp,
  };
}
