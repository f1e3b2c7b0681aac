/**
 * Which exec-gate answers hold for any argument vector (issue 16: a build runs `cc1` and `as` with a new
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
 * approval policy's own verdict for an unknown program (`sandbox`, `approval-policy`) is then the same for
 * every argv. Anything else is asked every time, as before.
 */
import type { Policy } from '../rules/index.js';
import { detectShell } from '../script/shell-detect.js';
import { isLoader, MULTI_CALL } from '../script/in-process.js';
import { dangerLooksAt } from '../heuristics/dangerous.js';
import { INTERPRETERS } from './shebang.js';
import { basenameOf, DECIDED_AS_INNER } from './wrapper-inner.js';
import { calledNames, STANDS_FOR, type InterceptedDecision } from './intercepted.js';

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
    Object.hasOwn(STANDS_FOR, name)
  );
}

/** May the supervisor give this answer again for any argv of the same file, path, name and run? */
export function reusableForAnyArgv(policy: Policy, d: InterceptedDecision, x: ReuseInput): boolean {
  if (!x.ownAnswer || x.skill || x.knownAs !== undefined) return false;
  if (d.action === 'prompt' || d.action.type !== 'Run' || d.hardening || d.code_loading.length > 0) return false;
  if (d.decision !== 'allow' || d.decision_driven_by_policy) return false;
  const by = d.decided_by;
  if (by.type !== 'heuristic' || (by.name !== 'sandbox' && by.name !== 'approval-policy')) return false;
  if (!d.evaluation.matchedRules.every((m) => m.type === 'heuristicsRuleMatch')) return false;
  if (calledNames(x.program, x.argv).length > 0 || basenameOf(x.argv[0] ?? '') !== basenameOf(x.program)) return false;
  if (x.program.includes('/scripts/') || !x.program.startsWith('/')) return false;
  // a symlink (or a folder that is one: /bin → usr/bin) names its target too, and rules about it apply
  const names = x.realProgram !== undefined && x.realProgram !== x.program ? [x.program, x.realProgram] : [x.program];
  return names.every((p) => !policy.namesProgram(p) && !argvDecides(p));
}
