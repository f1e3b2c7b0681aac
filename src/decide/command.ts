/**
 * Decide one subcommand: its own words, every command its wrappers run, and the variables it sets.
 * Rules first (hardened matching); where no rule matches, Codex's unmatched-command heuristic; opaque
 * commands (eval, source, non-literal names) get `prompt` instead; code-loading variables add `prompt`
 * whatever the rules say. Strictest wins.
 */
import { type Decision, type MatchOptions, type Policy, type RuleMatch, strictest } from '../rules/index.js';
import type { DecidedBy, DecidedCommand, HeuristicName } from './types.js';
import { explainUnmatchedCommand, type UnmatchedContext } from './unmatched.js';
import { type CodeLoadingOptions, type CodeLoadingVariable, codeLoadingVariables, dangerousCommand } from '../heuristics/index.js';
import { assignmentsToEnv } from './assignments.js';
import type { OpaqueKind } from '../script/index.js';

export interface CommandContext {
  policy: Policy;
  options: MatchOptions;
  unmatched: UnmatchedContext;
  codeLoading?: CodeLoadingOptions;
}

export interface CommandInput {
  argv: string[];
  role: DecidedCommand['role'];
  /** opaque: never allowed by a heuristic (eval, source, non-literal names), except the kinds that run in
   * the sandbox (SANDBOXED_OPAQUE). literal: a command found in a complex script — only rules and the
   * danger check may object; it never allows anything by itself. */
  mode?: 'opaque' | 'literal';
  /** what an opaque command hides */
  opaqueKind?: OpaqueKind;
}

/**
 * Opaque code that runs where the approval policy would let any unknown command run: inline code
 * (`python -c`, `node -e`, `perl -e`), a script file (`sh file`, `bash file`), `source`/`.` of a file, `eval`,
 * a script on stdin, a shell's command string known only at run time, a name known only at run time. The
 * exec gate decides every exec it makes when it happens: the inline code's, eval's and the run's own shell's
 * as the model's (rules and heuristics), a script file's as its program's (rules). So under on-request,
 * on-failure and never it runs in the turn sandbox instead of asking; under danger-full-access it runs too,
 * as Codex runs it unasked, with the exec gate on every exec it makes. Under untrusted it is asked, as every
 * command that is not known to be safe is. Not here: `ssh` (runs elsewhere), `su`, busybox and other shells
 * whose commands run in process (unseen by the exec gate), the wrappers that change who or where a command
 * runs (`chroot`, `runuser`, `systemd-run`, ...), and tmux and screen (a server outside the run may run the
 * string).
 */
const SANDBOXED_OPAQUE: ReadonlySet<OpaqueKind> = new Set(['inline-code', 'script-file', 'stdin-script', 'source', 'eval', 'command-string', 'dynamic-name']);
const SERVERS = new Set(['tmux', 'screen']);

export function runsSandboxed(kind: OpaqueKind | undefined, argv: readonly string[]): boolean {
  if (kind === undefined || !SANDBOXED_OPAQUE.has(kind)) return false;
  return !argv.some((w) => SERVERS.has(w.slice(w.lastIndexOf('/') + 1)));
}

export interface DecidedWithMatches extends DecidedCommand {
  matches: RuleMatch[];
}

/** A rule match or heuristic match as shown by `gate explain` and the audit log. */
export function toSource(m: RuleMatch, h: Explained | undefined): DecidedBy {
  if (m.type === 'prefixRuleMatch') {
    const src: DecidedBy = {
      type: 'rule',
      decision: m.decision,
      matched_prefix: [...m.matchedPrefix],
      file: m.source.file,
      line: m.source.line,
      col: m.source.col,
    };
    if (m.justification !== undefined) src.justification = m.justification;
    if (m.resolvedProgram !== undefined) src.resolved_program = m.resolvedProgram;
    return src;
  }
  return { type: 'heuristic', decision: m.decision, name: h?.name ?? 'approval-policy', command: [...m.command] };
}

export interface Explained {
  decision: Decision;
  name: HeuristicName;
}

function explain(cmd: string[], mode: CommandInput['mode'], u: UnmatchedContext, kind?: OpaqueKind): Explained {
  if (mode === 'literal') {
    const danger = dangerousCommand(cmd, { historicGit: u.gitReadOnly === true });
    if (danger) return { decision: u.approvalPolicy === 'never' ? 'forbidden' : 'prompt', name: 'dangerous' };
    return { decision: 'allow', name: 'literal' };
  }
  const h = explainUnmatchedCommand(cmd, u);
  // An opaque command is never allowed by a heuristic: at least ask — unless it runs in the sandbox with
  // every exec it makes decided then.
  if (mode === 'opaque' && h.decision === 'allow') return runsSandboxed(kind, cmd) ? { decision: 'allow', name: 'sandboxed' } : { decision: 'prompt', name: 'opaque' };
  return { decision: h.decision, name: h.reason };
}

export function decideCommand(c: CommandInput, ctx: CommandContext): DecidedWithMatches {
  let last: Explained | undefined;
  const fallback = (cmd: string[]): Decision => (last = explain(cmd, c.mode, ctx.unmatched, c.opaqueKind)).decision;
  const matches = ctx.policy.matchesForCommand(c.argv, ctx.options, fallback);
  const decision = strictest(matches.map((m) => m.decision)) ?? 'allow';
  return { argv: c.argv, role: c.role, decision, sources: matches.map((m) => toSource(m, last)), matches };
}

/** Code-loading variables set by assignments and wrapper operands: a `prompt` entry, or null. */
export function decideAssignments(words: readonly string[], ctx: CommandContext): { entry: DecidedCommand; vars: CodeLoadingVariable[] } | null {
  if (words.length === 0) return null;
  const vars = codeLoadingVariables(assignmentsToEnv(words), ctx.codeLoading);
  if (vars.length === 0) return null;
  return {
    vars,
    entry: {
      argv: [...words],
      role: 'assignment',
      decision: 'prompt',
      sources: [{ type: 'heuristic', decision: 'prompt', name: 'code-loading', command: vars.map((v) => `${v.name}=${v.value}`) }],
    },
  };
}

