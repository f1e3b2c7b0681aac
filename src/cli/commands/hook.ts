/**
 * `gate hook claude-code|gemini`: an agent's permission hook (Claude Code PreToolUse for Bash, gemini-cli
 * BeforeTool for run_shell_command). Reads the agent's JSON on stdin, asks the daemon for a pre-flight of
 * the command with `ask: false` (the same rules, heuristics and session cache as gate-sh; a command that
 * needs a person is answered "ask" so the agent asks its own user), prints the agent's JSON answer.
 * Fail closed: unreadable input, no daemon, a protocol error → "deny" with the reason, never "allow".
 * An agent starts this before every shell command: bin/gate loads it as one bundled file with a V8 code
 * cache (scripts/bundle-gate-sh.mjs), so it imports only what an answer needs; the daemon's autostart
 * is loaded only when no daemon runs.
 */
import { readFileSync } from 'node:fs';
import { gatePaths, type Env } from '../../protocol/paths.js';
import { RequestClient, RequestError } from '../../protocol/client.js';
import type { PreflightReply } from '../../protocol/messages.js';
import { HookInputError, hookOutput, hookDecision, parseHookInput, type HookAgent, type HookDecision } from '../../integrations/hooks/decision.js';

const USAGE = `usage: gate hook claude-code|gemini
  Answers an agent's permission hook for its shell tool from gate-sh's rules, heuristics and session
  cache (through the daemon): JSON on stdin, JSON on stdout. Installed by 'gate setup <agent> --route hook'.
`;

const AGENTS: readonly HookAgent[] = ['claude-code', 'gemini'];

export async function run(argv: string[]): Promise<number> {
  const agent = argv[0] as HookAgent;
  if (argv.length !== 1 || !AGENTS.includes(agent)) {
    process.stderr.write(argv[0] === '--help' || argv[0] === '-h' ? USAGE : `gate-sh: hook: expected one of ${AGENTS.join(', ')}\n${USAGE}`);
    return argv[0] === '--help' || argv[0] === '-h' ? 0 : 2;
  }
  let out: Record<string, unknown>;
  try {
    out = await answer(agent, readFileSync(0, 'utf8'), process.env, process.cwd());
  } catch (e) {
    // stdin could not be read: a denial, as for any input that cannot be judged
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
  const v = await decide(agent, input, env, cwd);
  return v ? hookOutput(agent, v) : {};
}

async function decide(agent: HookAgent, input: string, env: Env, cwd: string): Promise<HookDecision | null> {
  let call;
  try {
    call = parseHookInput(agent, input, cwd);
  } catch (e) {
    // any failure is a denial: both agents go on with the command when a hook exits with an error
    return {
      decision: 'deny',
      reason: `gate-sh: ${e instanceof HookInputError ? e.message : `cannot read the hook input (${(e as Error).message})`}; nothing runs`,
    };
  }
  if (!call) return null;
  try {
    const reply = await preflight(call.command, call.cwd, env);
    if (reply.type !== 'preflight' || !reply.action)
      return { decision: 'deny', reason: `gate-sh: protocol error: unexpected reply '${String(reply.type)}'; nothing runs` };
    return hookDecision(reply);
  } catch (e) {
    return { decision: 'deny', reason: `gate-sh: ${(e as Error).message}; nothing runs` };
  }
}

async function preflight(script: string, cwd: string, env: Env): Promise<PreflightReply> {
  const paths = gatePaths(env);
  const msg = { type: 'preflight', shell: 'bash', flag: '-c', script, cwd, pid: process.pid, sandbox_permissions: 'use_default', ask: false };
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
