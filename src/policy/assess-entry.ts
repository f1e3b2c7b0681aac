/**
 * Building assessment entries: a subcommand (or a literal command of a complex script) with everything
 * that was evaluated for it — the command, its wrappers' inner commands, the variables it sets.
 */
import { strictest, type Decision } from './decision.js';
import type { EvaluatedCommand, SubcommandAssessment } from './assess-types.js';
import type { Subcommand } from '../script/analyze.js';
import { dangerousCommand, type DangerKind } from '../heuristics/dangerous.js';
import { evaluateAssignments, evaluateCommand, wrapperAssignments, type EvalContext, type EvaluatedWithMatches } from './assess-subcommand.js';

export interface Entry {
  argv: string[];
  kind: SubcommandAssessment['kind'];
  evaluated: EvaluatedWithMatches[];
  /** gate-sh's own findings (code-loading assignments). */
  extra: EvaluatedCommand[];
  /** gate-sh's own prompt reason (code-loading, opaque, complex), shown when no rule prompted. */
  ownReason?: string;
  opaque?: string;
  assignments?: string[];
  danger?: DangerKind;
  /** A plain, inspectable subcommand: Codex's amendment logic applies to it. */
  amendable: boolean;
}

/** A subcommand of a plain script, a bare argv, or (`literal`) a command found inside a complex script. */
export function subcommandEntry(s: Subcommand, ec: EvalContext, literal?: 'literal'): Entry {
  const mode = s.opaque ? 'opaque' : literal;
  const evaluated = [
    evaluateCommand({ argv: [...s.argv], role: literal ? 'literal' : 'command', mode }, ec),
    ...s.inner.map((inner) => evaluateCommand({ argv: [...inner], role: 'inner', mode: literal }, ec)),
  ];
  const assignWords = [...s.assignments, ...wrapperAssignments(s.argv), ...s.inner.flatMap((i) => wrapperAssignments(i))];
  const assign = evaluateAssignments(assignWords, ec);
  const historicGit = ec.unmatched.gitReadOnly === true;
  const danger = [s.argv, ...s.inner].map((c) => dangerousCommand(c, { historicGit })).find((d) => d) ?? undefined;
  const reasons = [
    ...(s.opaque ? [`${s.opaque}: what it runs cannot be inspected`] : []),
    ...(assign ? [`sets code-loading variables: ${assign.vars.map((v) => v.name).join(', ')}`] : []),
  ];
  // Fail closed on nothing to run: there is no program to judge.
  const empty: EvaluatedCommand[] = s.argv.length === 0 || s.argv[0] === ''
    ? [{ argv: [...s.argv], role: 'command', decision: 'forbidden', sources: [{ type: 'heuristic', decision: 'forbidden', name: 'invalid', command: [...s.argv] }] }]
    : [];
  return {
    argv: [...s.argv],
    kind: literal ? 'literal' : 'plain',
    evaluated,
    extra: [...empty, ...(assign ? [assign.entry] : [])],
    ...(reasons.length ? { ownReason: reasons.join('; ') } : {}),
    ...(s.opaque ? { opaque: s.opaque } : {}),
    ...(s.assignments.length ? { assignments: [...s.assignments] } : {}),
    ...(danger ? { danger } : {}),
    amendable: !literal && !s.opaque && !assign,
  };
}

/** The analyzer's reason for a dynamic command name (src/script/analyze.ts). */
const NON_LITERAL_NAME = /non-literal command name/;

/** The whole invocation of a complex script: judged by rules and the heuristic, never proven safe. */
export function wholeScriptEntry(command: string[], reasons: string[], ec: EvalContext): Entry {
  // A command whose name is only known at run time (`$x -rf y`) is never allowed by a heuristic.
  const mode = reasons.some((r) => NON_LITERAL_NAME.test(r)) ? ('opaque' as const) : undefined;
  return {
    argv: command,
    kind: 'script',
    evaluated: [evaluateCommand({ argv: command, role: 'script', mode }, ec)],
    extra: [],
    ownReason: `the script cannot be completely inspected: ${reasons.join('; ')}`,
    amendable: false,
  };
}

/** Codex's heredoc prefix (`python3 <<'PY' ... PY` → `python3`): judged as that command. */
export function heredocEntry(prefix: readonly string[], ec: EvalContext): Entry {
  return { ...subcommandEntry({ argv: [...prefix], assignments: [], inner: [], redirects: true }, ec), amendable: false };
}

export function entryDecision(e: Entry): Decision {
  return strictest([...e.evaluated, ...e.extra].map((x) => x.decision)) ?? 'allow';
}

/** May this entry run unsandboxed when every command is explicitly allowed? */
export function mayLeaveSandbox(e: Entry): boolean {
  return e.kind !== 'script' && !e.opaque && e.extra.length === 0;
}
