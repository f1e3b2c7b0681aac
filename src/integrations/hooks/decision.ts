/**
 * Agent permission hooks (Claude Code `PreToolUse`, gemini-cli `BeforeTool`): from the hook's JSON input to
 * the shell command it is about, and from the daemon's pre-flight reply to the agent's JSON answer.
 * Pure. Trust boundary: the hook input comes from the agent (untrusted text, checked here field by field);
 * what may run is decided by gate-sh when the rewritten command runs (HookRoute), or, for a command that
 * would run unsandboxed, by the daemon asked with `ask: false` (a command that needs a person is `ask`).
 */
import type { PreflightReply, SubcommandReply } from '../../protocol/index.js';
import { shellCommand, visibleText } from '../../text/index.js';

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
 *   `hookSpecificOutput.tool_input`): the answer is `allow` with the command rewritten to
 *   `<gate-sh> -c '<command>'`, so gate-sh decides it as on its shell route (forbidden: refused with the
 *   rule's reason, exit 126; needs a person: its approver, or refused headless), and runs it in its
 *   sandbox, under its exec gate and audit. Never a hook `deny` or `ask` for a command: Claude Code 2.1.332
 *   reports every hook deny to the model as "PreToolUse:Bash hook error: ...", and
 *   gemini-cli `-p` waits for ever on an `ask`; gate-sh's own refusal reads as a refusal.
 * - `gated-shell`: the agent's shell already is gate-sh (its shell route): `allow`, nothing rewritten.
 * - `unsandboxed`: the command would run in the agent's own shell with no sandbox and no exec gate: the
 *   daemon is asked as for a run outside the sandbox (`require_escalated`), forbidden → `deny`, needs a
 *   person → `ask`. No agent gate-sh wires is in this case today (docs/agents.md, "Hooks").
 */
export type HookRoute = { kind: 'rewrite'; gateSh: string } | { kind: 'gated-shell' } | { kind: 'unsandboxed' };

/**
 * The answer on a route that gate-sh itself decides when the command runs (rewrite, gated-shell). What the
 * agent itself refuses stays refused: a rewrite would hide the command from the agent's own check (gemini-cli
 * refuses command substitution, geminiRefusal), so such a command is denied with the agent's reason instead.
 */
export function gatedDecision(route: Exclude<HookRoute, { kind: 'unsandboxed' }>, command: string, agent?: HookAgent): HookDecision {
  if (route.kind === 'gated-shell') return { decision: 'allow', reason: "gate-sh: the agent's shell is gate-sh, which judges and runs it" };
  const refused = agent === 'gemini' ? geminiRefusal(command) : undefined;
  if (refused) return { decision: 'deny', reason: refused };
  return { decision: 'allow', reason: 'gate-sh: runs through gate-sh (its rules, sandbox, exec gate and audit)', command: throughGateSh(route.gateSh, command) };
}

/** The daemon's pre-flight (asked with `require_escalated`) as the answer for a command that runs unsandboxed. */
export function unsandboxedDecision(reply: PreflightReply): HookDecision {
  const subs: SubcommandReply[] = reply.subcommands ?? [];
  const reasonOf = (s: SubcommandReply) => visibleText((s.action as { reason: string }).reason);
  const forbidden = subs.filter((s) => s.decision === 'forbidden' && s.action.type === 'Deny');
  if (forbidden.length) return { decision: 'deny', reason: forbidden.map((s) => `gate-sh: denied: ${reasonOf(s)}`).join('\n') };
  const asked = subs.filter((s) => s.decision === 'prompt' && s.action.type === 'Deny');
  if (asked.length) return { decision: 'ask', reason: asked.map((s) => `gate-sh: ${reasonOf(s)}`).join('\n') };
  if (reply.action.type === 'Deny') return { decision: 'deny', reason: `gate-sh: denied: ${visibleText(reply.action.reason)}` };
  return { decision: 'allow', reason: `gate-sh: allowed to run unsandboxed (${sourcesOf(subs)})` };
}

/** gemini-cli 0.61.0's own words when its shell tool refuses a command (its shell tool's execute()). */
export const GEMINI_SUBSTITUTION_REFUSAL =
  'Command injection detected: command substitution syntax ($(), backticks, <() or >()) found in command arguments. On PowerShell, @() array ' +
  'subexpressions and $() subexpressions are also blocked. This is a security risk and the command was blocked.';

/**
 * gemini-cli's refusal of `command`, or undefined when it runs it. gemini-cli 0.61.0 refuses, before running
 * anything and even with --yolo, every command with `$(`, a backtick, `<(` or `>(` outside single quotes
 * (after taking off a `bash -c '...'` wrapper): its permission rules decide a command by its root commands
 * and cannot see into a substitution. Its check, read from its bundle (detectBashSubstitution,
 * stripShellWrapper); a double-quoted wrapper is taken off as its fallback does (without unescaping).
 */
export function geminiRefusal(command: string): string | undefined {
  const wrapper = /^\s*(?:(?:\S+\/)?(?:sh|bash|zsh))\s+-c\s+/i.exec(command);
  let c = command.trim();
  if (wrapper) {
    c = command.slice(wrapper[0].length).trim();
    if (c.length >= 2 && ((c.startsWith('"') && c.endsWith('"')) || (c.startsWith("'") && c.endsWith("'")))) c = c.slice(1, -1);
  }
  let single = false;
  let double = false;
  for (let i = 0; i < c.length; i++) {
    const ch = c[i];
    if (ch === "'" && !double) single = !single;
    else if (ch === '"' && !single) double = !double;
    else if (single) continue;
    else if (ch === '\\' && i + 1 < c.length && (!double || '$`"\\\n'.includes(c[i + 1]))) i++;
    else if ((ch === '$' && c[i + 1] === '(') || ch === '`' || (!double && (ch === '<' || ch === '>') && c[i + 1] === '(')) return GEMINI_SUBSTITUTION_REFUSAL;
  }
  return undefined;
}

/**
 * The command rewritten to run through gate-sh: shell source bash reads back as exactly these words, newlines,
 * quotes and `!` included (src/text/shell-words.ts).
 */
export function throughGateSh(gateSh: string, command: string): string {
  return shellCommand([gateSh, '-c', command]);
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
