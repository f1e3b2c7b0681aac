/**
 * Agent permission hooks (Claude Code `PreToolUse`, gemini-cli `BeforeTool`): from the hook's JSON input to
 * the shell command it is about, and from the daemon's pre-flight reply to the agent's JSON answer.
 * Pure. Trust boundary: the hook input comes from the agent (untrusted text, checked here field by field);
 * the decision comes from the daemon (rules, heuristics, session cache), which was asked with `ask: false`:
 * a command that needs a person is answered "ask", and the agent asks its own user.
 */
import type { PreflightReply, SubcommandReply } from '../../protocol/messages.js';

export type HookAgent = 'claude-code' | 'gemini';
export type HookDecision = { decision: 'allow' | 'deny' | 'ask'; reason: string };

/** The shell command a hook call is about: null when the call is not for the agent's shell tool. */
export interface HookCall {
  command: string;
  cwd: string;
}

/** The agent's shell tool, by the name its hook input gives it. */
const SHELL_TOOL: Record<HookAgent, string> = { 'claude-code': 'Bash', gemini: 'run_shell_command' };

export class HookInputError extends Error {}

/** Parse the hook's stdin. `fallbackCwd`: the hook process's own cwd (the agent starts hooks in its cwd). */
export function parseHookInput(agent: HookAgent, text: string, fallbackCwd: string): HookCall | null {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new HookInputError(`hook input is not JSON (${(e as Error).message})`);
  }
  if (typeof j !== 'object' || j === null || Array.isArray(j)) throw new HookInputError('hook input is not a JSON object');
  const o = j as Record<string, unknown>;
  if (o.tool_name !== SHELL_TOOL[agent]) return null;
  const input = o.tool_input;
  if (typeof input !== 'object' || input === null) throw new HookInputError(`hook input for ${SHELL_TOOL[agent]} has no tool_input object`);
  const command = (input as Record<string, unknown>).command;
  if (typeof command !== 'string') throw new HookInputError(`hook input for ${SHELL_TOOL[agent]} has no tool_input.command string`);
  const base = typeof o.cwd === 'string' && o.cwd.startsWith('/') ? o.cwd : fallbackCwd;
  // gemini-cli runs the command in tool_input.dir_path (relative to the workspace) when given
  const dir = agent === 'gemini' ? (input as Record<string, unknown>).dir_path : undefined;
  const cwd = typeof dir === 'string' && dir !== '' ? (dir.startsWith('/') ? dir : `${base.replace(/\/$/, '')}/${dir}`) : base;
  return { command, cwd };
}

/** The daemon's decision for the agent: forbidden → deny, needs a person → ask, otherwise allow. */
export function hookDecision(reply: PreflightReply): HookDecision {
  const subs: SubcommandReply[] = reply.subcommands ?? [];
  if (reply.action.type !== 'Deny') return { decision: 'allow', reason: `gate-sh: allowed (${sourcesOf(subs)})` };
  const forbidden = subs.filter((s) => s.decision === 'forbidden' && s.action.type === 'Deny');
  if (forbidden.length) return { decision: 'deny', reason: forbidden.map((s) => `gate-sh: denied: ${(s.action as { reason: string }).reason}`).join('\n') };
  const asked = subs.filter((s) => s.decision === 'prompt' && s.action.type === 'Deny');
  if (asked.length) return { decision: 'ask', reason: asked.map((s) => `gate-sh: ${(s.action as { reason: string }).reason}`).join('\n') };
  return { decision: 'deny', reason: `gate-sh: denied: ${reply.action.reason}` };
}

function sourcesOf(subs: SubcommandReply[]): string {
  const names = new Set<string>();
  for (const s of subs)
    for (const src of s.source ?? [])
      names.add(src.kind === 'rule' ? `rule ${src.file}:${src.line}` : src.kind === 'heuristic' ? `heuristic ${src.name}` : src.kind);
  return [...names].slice(0, 4).join(', ') || 'no rule objects';
}

/** The JSON the agent reads on the hook's stdout. */
export function hookOutput(agent: HookAgent, v: HookDecision): Record<string, unknown> {
  if (agent === 'claude-code')
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: v.decision, permissionDecisionReason: v.reason } };
  return { decision: v.decision, reason: v.reason };
}
