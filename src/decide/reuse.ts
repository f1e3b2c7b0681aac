/**
 * Which exec-gate answers hold for any argument vector (a build runs `cc1` and `as` with a new
 * argv each time, and each exec paid a daemon round trip). The daemon marks such an answer, and the run's
 * supervisor (shims/launch/reuse.c) answers later execs of the very same file, under the same path,
 * name and run, itself, until the policy changes. Pure.
 *
 * An answer is reusable only when nothing the decision reads could differ for another argv, cwd or
 * environment: it runs in place (Run, not an escalation: the environment's code-loading variables, the
 * writable roots and the cwd are read only for a run that would widen), no rule names the program (rules
 * are looked up by the program's path or name), no heuristic looks at its arguments (the danger list, the
 * shells, the interpreters whose scripts are decided as themselves, the wrappers decided as their inner
 * command, the loader and multi-call binaries, the drop-in names), and it is what it says (argv[0] names the
 * program itself, and the target of a symlink is as unguarded as its name; no copy of a guarded program, no
 * skill script). The
 * approval policy's own decision for an unknown program (`sandbox`, `approval-policy`) is then the same for
 * every argv. Anything else is asked every time, as before.
 */
import type { Policy } from '../rules/index.js';
import { detectShell, isLoader, MULTI_CALL, runsElsewhere } from '../script/index.js';
import { dangerLooksAt } from '../heuristics/index.js';
import { INTERPRETERS } from './shebang.js';
import { basenameOf, DECIDED_AS_INNER } from './wrapper-inner.js';
import { calledNames, STANDS_FOR, type InterceptedDecision } from './intercepted.js';
import type { ReuseScope } from '../protocol/index.js';
import type { Provenance } from './provenance.js';

export interface ReuseInput {
  program: string;
  argv: readonly string[];
  /** the program's real path when it is a symlink, or lies in a folder that is one (ExecRequest.real_program) */
  realProgram?: string;
  /** the rule name whose program has the same bytes (src/daemon/program-identity.ts) */
  knownAs?: string;
  /** a skill script's exec (src/skills) */
  skill: boolean;
  /** the answer given is the decision's own (not a pre-flight settlement of this argv) */
  ownAnswer: boolean;
}

/** Programs whose decision reads their arguments, whatever the rules say. */
export function argvDecides(program: string): boolean {
  const name = basenameOf(program);
  return (
    dangerLooksAt(program) ||
    detectShell(name) !== null ||
    INTERPRETERS.has(name) ||
    DECIDED_AS_INNER.has(name) ||
    MULTI_CALL.has(name) ||
    isLoader(name) ||
    Object.hasOwn(STANDS_FOR, name) ||
    runsElsewhere(name)
  );
}

/** The checks both kinds of reuse share: the decision's own heuristic Run in place, of a program no rule
 * names, called by its own name, not a copy, a skill script or a pre-flight settlement; its names. */
function plainRun(policy: Policy, d: InterceptedDecision, x: ReuseInput, heuristics: readonly string[]): string[] | null {
  if (!x.ownAnswer || x.skill || x.knownAs !== undefined) return null;
  if (d.action === 'prompt' || d.action.type !== 'Run' || d.hardening || d.code_loading.length > 0) return null;
  if (d.decision !== 'allow' || d.decision_driven_by_policy) return null;
  const by = d.decided_by;
  if (by.type !== 'heuristic' || !heuristics.includes(by.name)) return null;
  if (!d.evaluation.matchedRules.every((m) => m.type === 'heuristicsRuleMatch')) return null;
  if (calledNames(x.program, x.argv).length > 0 || basenameOf(x.argv[0] ?? '') !== basenameOf(x.program)) return null;
  if (x.program.includes('/scripts/') || !x.program.startsWith('/')) return null;
  // a symlink (or a folder that is one: /bin → usr/bin) names its target too, and rules about it apply
  const names = x.realProgram !== undefined && x.realProgram !== x.program ? [x.program, x.realProgram] : [x.program];
  return names.every((p) => !policy.namesProgram(p)) ? names : null;
}

/** May the supervisor give this answer again for any argv of the same file, path, name and run? */
export function reusableForAnyArgv(policy: Policy, d: InterceptedDecision, x: ReuseInput): boolean {
  const names = plainRun(policy, d, x, ['sandbox', 'approval-policy']);
  return names?.every((p) => !argvDecides(p)) === true;
}

/**
 * May the supervisor give this answer again for any argv of the same file, path, name and run, when the exec
 * is made below the same program running its own files? That reading (src/decide/provenance.ts)
 * lifts the heuristics, so what they read in the arguments (the danger list's `rm -rf`, a shell's command
 * string) decides nothing there: `rm` and `sh -c` under make or configure are Run in place whatever their
 * argv, as long as no rule can match them. A rule is looked up by the program's path or name, and by the
 * names an argv spells for a shell or an interpreter (`sh ./configure` is decided as `./configure`, `node
 * /usr/bin/npm` as npm): those two are reused so only while the policy has no prefix rule at all. The
 * programs whose argv names a command decided besides them (wrappers decided as their inner command, the
 * loader, multi-call binaries, drop-in names, what hands commands elsewhere) are never reused so. The
 * scope: the program's process, as /proc showed it; the supervisor holds it only for execs made below it,
 * through none of gate-sh's plumbing, while it runs the image it was decided by (shims/gate-reuse.c).
 */
export function reusableInScope(policy: Policy, d: InterceptedDecision, x: ReuseInput, provenance: () => Provenance): ReuseScope | null {
  const names = plainRun(policy, d, x, ['program', 'sandbox', 'approval-policy']);
  if (!names) return null;
  for (const p of names) {
    const name = basenameOf(p);
    if (DECIDED_AS_INNER.has(name) || MULTI_CALL.has(name) || isLoader(name) || Object.hasOwn(STANDS_FOR, name) || runsElsewhere(name)) return null;
    const namesPrograms = detectShell(name) !== null || INTERPRETERS.has(name);
    if (namesPrograms && policy.prefixRules().length > 0) return null;
  }
  // (worked out last, and only here when the decision did not need it: it reads /proc)
  const p = d.provenance ?? provenance();
  return p.kind === 'program' && p.scope ? p.scope : null;
}
