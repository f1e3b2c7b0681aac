/**
 * `gate hook claude-code|gemini`: an agent's permission hook (Claude Code PreToolUse for Bash, gemini-cli
 * BeforeTool for run_shell_command). Reads the agent's JSON on stdin and prints the agent's JSON answer:
 * `allow` with the command rewritten to run through gate-sh, which decides it (rules, heuristics, session
 * cache, its approver), runs it in its sandbox under its exec gate, and audits it; `allow` alone when the
 * agent's shell is gate-sh already (src/integrations/hooks/decision.ts, HookRoute). Only for a command that
 * would run unsandboxed is the daemon asked here (pre-flight with `ask: false`).
 * Fail closed: unreadable input, no gate-sh to run through, (unsandboxed) no daemon or a protocol error →
 * "deny" with the reason, never a bare "allow".
 * An agent starts this before every shell command: bin/gate loads it as one bundled file with a V8 code
 * cache (scripts/bundle-gate-sh.mjs), so it imports only what an answer needs; the daemon's autostart
 * is loaded only when no daemon runs.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { type Env, gatePaths } from '../../paths/index.js';
import { RequestClient, RequestError } from '../../transport/index.js';
import type { PreflightReply } from '../../protocol/index.js';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  claudeShell,
  fsProbe,
  gatedDecision,
  geminiShell,
  type HookAgent,
  type HookCall,
  type HookDecision,
  HookInputError,
  hookOutput,
  type HookRoute,
  isGateShEntry,
  parseHookInput,
  unsandboxedDecision,
} from '../../integrations/index.js';
import { visibleText } from '../../text/index.js';

const USAGE = `usage: gate hook claude-code|gemini
  Answers an agent's permission hook for its shell tool: the command is rewritten to run through
  gate-sh (its rules, sandbox, exec gate and audit): JSON on stdin, JSON on stdout. Installed by 'gate setup <agent> --route hook'.
`;

const AGENTS: readonly HookAgent[] = ['claude-code', 'gemini'];

export async function run(argv: string[]): Promise<number> {
  const agent = argv[0] as HookAgent;
  if (argv.length !== 1 || !AGENTS.includes(agent)) {
    process.stderr.write(argv[0] === '--help' || argv[0] === '-h' ? USAGE : `gate: hook: expected one of ${AGENTS.join(', ')}\n${USAGE}`);
    return argv[0] === '--help' || argv[0] === '-h' ? 0 : 2;
  }
  let out: Record<string, unknown>;
  try {
    out = await answer(agent, readFileSync(0, 'utf8'), process.env, process.cwd());
  } catch (e) {
    // stdin could not be read: a denial, as for any input that cannot be decided
    out = hookOutput(agent, { decision: 'deny', reason: `gate-sh: cannot read the hook input (${(e as Error).message}); nothing runs` });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
  return 0;
}

/**
 * The JSON the agent reads for one hook call: `{}` when the call is not for the agent's shell tool (no
 * opinion). `input` is the hook's stdin; `cwd` is where the hook runs (the agent's cwd), used when the
 * input names none.
 */
export async function answer(agent: HookAgent, input: string, env: Env, cwd: string): Promise<Record<string, unknown>> {
  const v = await decideHook(agent, input, env, cwd);
  return v ? hookOutput(agent, v.decision, v.call?.toolInput) : {};
}

async function decideHook(agent: HookAgent, input: string, env: Env, cwd: string): Promise<{ decision: HookDecision; call?: HookCall } | null> {
  let call: HookCall | null;
  try {
    call = parseHookInput(agent, input, cwd);
  } catch (e) {
    // any failure is a denial: both agents go on with the command when a hook exits with an error
    const why = e instanceof HookInputError ? e.message : `cannot read the hook input (${(e as Error).message})`;
    return { decision: { decision: 'deny', reason: `gate-sh: ${visibleText(why)}; nothing runs` } };
  }
  if (!call) return null;
  const c = call;
  const deny = (reason: string) => ({ decision: { decision: 'deny' as const, reason: `gate-sh: ${visibleText(reason)}; nothing runs` }, call: c });
  const route = hookRoute(agent, env);
  if ('error' in route) return deny(route.error);
  if (route.kind !== 'unsandboxed') return { decision: gatedDecision(route, c.command, agent), call: c };
  try {
    const reply = await preflight(c.command, c.cwd, env);
    if (reply.type !== 'preflight' || !reply.action) return deny(`protocol error: unexpected reply '${String(reply.type)}'`);
    return { decision: unsandboxedDecision(reply), call: c };
  } catch (e) {
    return deny((e as Error).message);
  }
}

/**
 * How the agent's command will run (HookRoute): through its shell when that is already gate-sh (the shell
 * route wired too: rewriting would start gate-sh inside gate-sh), else rewritten to run through the
 * gate-sh beside this `gate` (the same install). Both agents gate-sh hooks into can rewrite
 * (docs/agents.md, "Hooks"); `unsandboxed` is the decision for an agent that could not.
 */
function hookRoute(agent: HookAgent, env: Env): HookRoute | { error: string } {
  const shell = agent === 'claude-code' ? claudeShell(env, {}, fsProbe).shell : geminiShell(env, fsProbe).shell;
  const gateSh = gateShBeside();
  if (!gateSh) return { error: `cannot find gate-sh beside ${process.argv[1] || 'gate'} to run the command through` };
  if (shell !== '' && (isGateShEntry(shell, { gateSh }) || isNestedShellShim(shell, gateSh))) return { kind: 'gated-shell' };
  return { kind: 'rewrite', gateSh };
}

/**
 * Whether `shell` is this install's nested-shell shim (shims/bin/bash → shims/gate-shell): what `bash` is on
 * PATH inside a gated run. gemini-cli starts its hooks with its own shell, so on its README set-up (the shell
 * route wired too) this hook runs inside gate-sh and finds the shim first: the agent's shell is gate-sh.
 */
function isNestedShellShim(shell: string, gateSh: string): boolean {
  try {
    return realpathSync(shell) === realpathSync(join(dirname(dirname(realpathSync(gateSh))), 'shims', 'gate-shell'));
  } catch {
    return false;
  }
}

/**
 * The gate-sh of this install: beside the `gate` the agent started (bin/), through its symlink if it is
 * one; else the package's own bin/ from this module's place (dist/src/cli/commands/ or, bundled,
 * dist/cjs-src/cli/), e.g. when answer() is called in-process.
 */
function gateShBeside(): string | undefined {
  const candidates: string[] = [];
  const gate = process.argv[1];
  if (gate) {
    candidates.push(join(dirname(gate), 'gate-sh'));
    try {
      candidates.push(join(dirname(realpathSync(gate)), 'gate-sh'));
    } catch {
      // no such file: its candidate above fails the same test
    }
  }
  const here = dirname(fileURLToPath(import.meta.url));
  candidates.push(resolve(here, '../../../bin/gate-sh'), resolve(here, '../../../../bin/gate-sh'));
  return candidates.find((x) => basename(x) === 'gate-sh' && fsProbe.executable(x) && statSync(x).isFile());
}

/** The daemon's decision on a command that would run outside every sandbox, asking nobody. */
async function preflight(script: string, cwd: string, env: Env): Promise<PreflightReply> {
  const paths = gatePaths(env);
  const msg = { type: 'preflight', shell: 'bash', flag: '-c', script, cwd, pid: process.pid, sandbox_permissions: 'require_escalated', ask: false };
  const opts = { timeoutMs: 1000, retries: 4 };
  const once = async (): Promise<PreflightReply> => {
    const client = RequestClient.open(paths);
    try {
      return await client.request<PreflightReply>(msg, opts);
    } finally {
      client.close();
    }
  };
  try {
    return await once();
  } catch (e) {
    if (!(e instanceof RequestError) || e.kind !== 'not-running') throw e;
    const { ensureDaemon } = await import('../../client/autostart.js');
    await ensureDaemon(env);
    return await once();
  }
}
