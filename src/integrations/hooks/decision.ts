/**
 * Agent permission hooks (Claude Code `PreToolUse`, gemini-cli `BeforeTool`): from the hook's JSON input to
 * the shell command it is about, and from the daemon's pre-flight reply to the agent's JSON answer.
 * Pure. Trust boundary: the hook input comes from the agent (untrusted text, checked here field by field);
 * the decision comes from the daemon (rules, heuristics, session cache), which was asked with `ask: false`:
 * a command that needs a person is answered "ask", and the agent asks its own user.
 */
import type { PreflightReply, SubcommandReply } from '../../protocol/messages.js';
import { visibleText } from '../../protocol/display.js';

export type HookAgent = 'claude-code' | 'gemini';
/** `command`: the command the agent runs instead of its own (an `allow` that rewrites it through gate-sh). */
export type HookDecision = { decision: 'allow' | 'deny' | 'ask'; reason: string; command?: string };

/** The shell command a hook call is about: null when the call is not for the agent's shell tool. */
export interface HookCall {
  command: string;
  cwd: string;
  /** the agent's whole tool input (Claude Code's `updatedInput` replaces all of it) */
  toolInput: Record<string, unknown>;
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
  return { command, cwd, toolInput: input as Record<string, unknown> };
}

/**
 * How the command the hook is about will really run, which decides what an `allow` may mean:
 * - `rewrite`: the agent lets the hook replace the command (Claude Code's `updatedInput`, gemini-cli's
 *   `hookSpecificOutput.tool_input`): every command that is not forbidden is answered `allow` with the
 *   command rewritten to `<gate-sh> -c '<command>'`, so it runs in gate-sh's sandbox, under its exec gate
 *   and audit, and gate-sh asks its own approver where a person must decide (headless: it refuses with the
 *   reason). No `ask`: gemini-cli in `-p` waits for ever on one (issue 31).
 * - `gated-shell`: the agent's shell already is gate-sh (its shell route): as `rewrite`, without the rewrite.
 * - `unsandboxed`: the command runs in the agent's own shell with no sandbox and no exec gate: the daemon
 *   was asked as for a run outside the sandbox (`require_escalated`), and what needs a person is `ask`.
 */
export type HookRoute = { kind: 'rewrite'; gateSh: string } | { kind: 'gated-shell' } | { kind: 'unsandboxed' };

/** The daemon's decision for the agent: forbidden → deny; otherwise by the route (HookRoute). */
export function hookDecision(reply: PreflightReply, route: HookRoute, command: string): HookDecision {
  const subs: SubcommandReply[] = reply.subcommands ?? [];
  const reasonOf = (s: SubcommandReply) => visibleText((s.action as { reason: string }).reason);
  const forbidden = subs.filter((s) => s.decision === 'forbidden' && s.action.type === 'Deny');
  if (forbidden.length) return { decision: 'deny', reason: forbidden.map((s) => `gate-sh: denied: ${reasonOf(s)}`).join('\n') };
  const asked = subs.filter((s) => s.decision === 'prompt' && s.action.type === 'Deny');
  if (reply.action.type === 'Deny' && asked.length === 0)
    return { decision: 'deny', reason: `gate-sh: denied: ${visibleText(reply.action.reason)}` };
  if (route.kind === 'unsandboxed') {
    if (asked.length) return { decision: 'ask', reason: asked.map((s) => `gate-sh: ${reasonOf(s)}`).join('\n') };
    return { decision: 'allow', reason: `gate-sh: allowed to run unsandboxed (${sourcesOf(subs)})` };
  }
  const why = asked.length ? `gate-sh asks its approver: ${asked.map(reasonOf).join('; ')}` : `pre-flight: ${sourcesOf(subs)}`;
  if (route.kind === 'gated-shell') return { decision: 'allow', reason: `gate-sh: the agent's shell is gate-sh, which judges it again (${why})` };
  return {
    decision: 'allow',
    reason: `gate-sh: runs through gate-sh (its sandbox, exec gate and audit; ${why})`,
    command: throughGateSh(route.gateSh, command),
  };
}

/**
 * The command rewritten to run through gate-sh. Single quotes with `'\''` for each quote: bash reads any
 * text back exactly so, newlines included (shell-quote's double-quoted form writes `!` as `\!`, which
 * `bash -c` keeps as two characters).
 */
export function throughGateSh(gateSh: string, command: string): string {
  const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `${sq(gateSh)} -c ${sq(command)}`;
}

function sourcesOf(subs: SubcommandReply[]): string {
  const names = new Set<string>();
  for (const s of subs)
    for (const src of s.source ?? [])
      names.add(src.kind === 'rule' ? `rule ${src.file}:${src.line}` : src.kind === 'heuristic' ? `heuristic ${src.name}` : src.kind);
  return [...names].slice(0, 4).join(', ') || 'no rule objects';
}

/**
 * The JSON the agent reads on the hook's stdout, in each agent's schema (checked against the pinned and the
 * latest versions' own code: Claude Code 2.1.197 and 2.1.332, gemini-cli 0.61.0). Claude Code:
 * `hookSpecificOutput` with `permissionDecision`, `permissionDecisionReason` and `updatedInput` (the whole
 * tool input: its other fields, such as `timeout` or `description`, stay as the agent gave them). gemini-cli:
 * `decision`, `reason`, and `hookSpecificOutput.tool_input`, which it merges into the tool's parameters.
 */
export function hookOutput(agent: HookAgent, v: HookDecision, toolInput: Record<string, unknown> = {}): Record<string, unknown> {
  const rewritten = v.command !== undefined ? { ...toolInput, command: v.command } : undefined;
  if (agent === 'claude-code')
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: v.decision,
        permissionDecisionReason: v.reason,
        ...(rewritten ? { updatedInput: rewritten } : {}),
      },
    };
  return { decision: v.decision, reason: v.reason, ...(v.command !== undefined ? { hookSpecificOutput: { tool_input: { command: v.command } } } : {}) };
}
