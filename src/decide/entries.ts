/**
 * Building decision entries: a subcommand (or a literal command of a complex script) with everything
 * that was evaluated for it — the command, its wrappers' inner commands, the variables it sets.
 */
import { type Decision, strictest } from '../rules/index.js';
import type { DecidedCommand, SubcommandDecision } from './types.js';
import type { ComplexScript, OpaqueKind, Subcommand } from '../script/index.js';
import { type DangerKind, dangerousCommand } from '../heuristics/index.js';
import { decideAssignments, decideCommand, type CommandContext, type DecidedWithMatches } from './command.js';
import { wrapperAssignments } from './assignments.js';
import { isReadOnlyBuiltin, decidedAsInner } from './wrapper-inner.js';
import { scriptOfShell } from './provenance.js';

export interface Entry {
  argv: string[];
  kind: SubcommandDecision['kind'];
  evaluated: DecidedWithMatches[];
  /** gate-sh's own findings (code-loading assignments). */
  extra: DecidedCommand[];
  /** gate-sh's own prompt reason (code-loading, opaque, complex), shown when no rule prompted. */
  ownReason?: string;
  /** The variables its assignments set that load code, and the reason without them (loadingInSandbox). */
  loading?: { names: string[]; otherReason?: string };
  /** What the command hides: the text for display, the kind to decide on. */
  opaque?: string;
  opaqueKind?: OpaqueKind;
  assignments?: string[];
  danger?: DangerKind;
  /** A plain, inspectable subcommand: Codex's amendment logic applies to it. */
  amendable: boolean;
}

/** A subcommand of a plain script, a bare argv, or (`literal`) a command found inside a complex script. */
export function subcommandEntry(s: Subcommand, ec: CommandContext, literal?: 'literal'): Entry {
  const hidden = opaqueKindOf(s);
  const mode = hidden ? 'opaque' : literal;
  // `sh ./configure` is decided as `./configure` too: a rule about the script holds however it is started
  const script = [s.argv, ...s.inner].map(scriptOfShell).find((x) => x !== null);
  const evaluated = [
    decideCommand({ argv: [...s.argv], role: literal ? 'literal' : 'command', mode, ...(hidden ? { opaqueKind: hidden } : {}) }, ec),
    ...s.inner.map((inner) => decideCommand({ argv: [...inner], role: 'inner', mode: literal }, ec)),
    ...(script ? [decideCommand({ argv: script, role: 'inner', mode: literal }, ec)] : []),
  ];
  // `timeout 30 git status` is decided as `git status` when only the approval policy's heuristic asked
  // about the wrapper itself (src/decide/wrapper-inner.ts); its inner commands are evaluated above.
  const own = evaluated[0];
  const heuristicOnly = own.sources.every((x) => x.type === 'heuristic' && x.name === 'approval-policy');
  if (!hidden && !literal && heuristicOnly && own.decision === 'prompt' && isReadOnlyBuiltin(s.argv))
    evaluated[0] = {
      ...own,
      decision: 'allow',
      sources: [{ type: 'heuristic', decision: 'allow', name: 'builtin', command: [...s.argv] }],
      matches: [{ type: 'heuristicsRuleMatch', command: [...s.argv], decision: 'allow' }],
    };
  else if (!hidden && decidedAsInner(s.argv[0] ?? '', s.inner, heuristicOnly, own.decision))
    evaluated[0] = {
      ...own,
      decision: 'allow',
      sources: [{ type: 'heuristic', decision: 'allow', name: 'wrapper', command: [...s.argv] }],
      matches: [{ type: 'heuristicsRuleMatch', command: [...s.argv], decision: 'allow' }],
    };
  const assignWords = [...s.assignments, ...wrapperAssignments(s.argv), ...s.inner.flatMap((i) => wrapperAssignments(i))];
  const assign = decideAssignments(assignWords, ec);
  const historicGit = ec.unmatched.gitReadOnly === true;
  let danger = dangerousCommand(s.argv, { historicGit });
  for (const i of s.inner) danger ??= dangerousCommand(i, { historicGit });
  const extra: DecidedCommand[] = [];
  // Fail closed on nothing to run: there is no program to decide.
  if (s.argv.length === 0 || s.argv[0] === '')
    extra.push({
      argv: [...s.argv],
      role: 'command',
      decision: 'forbidden',
      sources: [{ type: 'heuristic', decision: 'forbidden', name: 'invalid', command: [...s.argv] }],
    });
  if (assign) extra.push(assign.entry);
  const entry: Entry = { argv: [...s.argv], kind: literal ? 'literal' : 'plain', evaluated, extra, amendable: !literal && !hidden && !assign };
  const reasons: string[] = [];
  if (hidden) reasons.push(`${s.opaque ?? hidden}: what it runs cannot be inspected`);
  if (assign) {
    const names = assign.vars.map((v) => v.name);
    entry.loading = reasons.length ? { names, otherReason: reasons[0] } : { names };
    reasons.push(`sets code-loading variables: ${names.join(', ')}`);
  }
  if (reasons.length) entry.ownReason = reasons.join('; ');
  if (hidden) (entry.opaque = s.opaque ?? hidden), (entry.opaqueKind = hidden);
  if (s.assignments.length) entry.assignments = [...s.assignments];
  if (danger) entry.danger = danger;
  return entry;
}

/**
 * What a subcommand hides, as its kind; the analysis sets the kind with the text, and a text without
 * a kind (a hand-built Subcommand) still counts: never weaker than the text.
 */
function opaqueKindOf(s: Subcommand): OpaqueKind | undefined {
  return s.opaqueKind ?? (s.opaque ? 'command-string' : undefined);
}

/** The whole invocation of a complex script: decided by rules and the heuristic, never proven safe. */
/** complex reasons of a script that was not read at all (src/script/analyze.ts: unread, badText) */
const UNREAD = /^(script is not a string|script larger than \d+ bytes$|NUL byte|invalid UTF)/;

export function wholeScriptEntry(command: string[], a: ComplexScript, ec: CommandContext): Entry {
  const { reasons } = a;
  // A command whose name is only known at run time (`$x -rf y`) is never allowed by a heuristic; nor is a
  // script the parsers could not read at all (a NUL byte, over the size cap, not UTF-8): what
  // cannot be read is asked, never allowed by the sandbox heuristic.
  const unread = reasons.some((r) => UNREAD.test(r));
  const mode = unread || a.opaqueKinds.includes('dynamic-name') ? ('opaque' as const) : undefined;
  return {
    argv: command,
    kind: 'script',
    // (an unread script has no kind that runs sandboxed: it is asked, not run in the sandbox as a dynamic
    // command name is)
    evaluated: [decideCommand({ argv: command, role: 'script', mode, ...(mode && !unread ? { opaqueKind: 'dynamic-name' as const } : {}) }, ec)],
    extra: [],
    ownReason: `the script cannot be completely inspected: ${reasons.join('; ')}`,
    amendable: false,
  };
}

/** Codex's heredoc prefix (`python3 <<'PY' ... PY` → `python3`): decided as that command. */
export function heredocEntry(prefix: readonly string[], ec: CommandContext): Entry {
  return { ...subcommandEntry({ argv: [...prefix], assignments: [], inner: [], redirects: true }, ec), amendable: false };
}

export function entryDecision(e: Entry): Decision {
  return strictest([...e.evaluated, ...e.extra].map((x) => x.decision)) ?? 'allow';
}

/**
 * May this entry run unsandboxed when every command is explicitly allowed? Never with code-loading
 * assignments; `ignoringLoading`: would it, were they not there (where they ask: src/decide/script.ts).
 */
export function mayLeaveSandbox(e: Entry, ignoringLoading = false): boolean {
  return e.kind !== 'script' && !e.opaqueKind && e.extra.every((x) => ignoringLoading && x.role === 'assignment');
}

/**
 * The entry run where its code-loading assignments cross nothing: in the turn's sandbox, or with no sandbox
 * at all, where the model could run whatever they would load as well by itself (`export PYTHONPATH=src;
 * pytest` was never asked either). The assignment stays in the record as a heuristic `allow`, and still
 * keeps the entry in the sandbox (mayLeaveSandbox) and without an amendment.
 */
export function loadingInSandbox(e: Entry): Entry {
  if (!e.loading) return e;
  const extra = e.extra.map((x): DecidedCommand => (x.role === 'assignment' ? { ...x, decision: 'allow', sources: x.sources.map((s) => ({ ...s, decision: 'allow' as const })) } : x));
  return { ...e, extra, ownReason: e.loading.otherReason };
}
