/**
 * The one result of a decision, from a subcommand to the wire: what the daemon needs per subcommand (or per
 * intercepted exec) to reply, prompt, cache and audit. A Decider turns a request into these
 * (src/decide/decider.ts; the richer SubcommandDecision of `gate explain` becomes one in result.ts).
 * Pure types plus small helpers.
 */
import type { Decision } from '../rules/index.js';
import type { ApprovalPolicy } from './approval-policy.js';
import type { Action, DecisionSource, ExecRequest, PreflightRequest, ReuseScope, ReviewDecision, SandboxPermissions } from '../protocol/index.js';
import type { PermissionProfile, SandboxPolicy } from '../sandbox/index.js';
import type { Ancestry } from './provenance.js';

export interface SubcommandResult {
  argv: string[];
  decision: Decision;
  source: DecisionSource[];
  requirement: 'skip' | 'needs_approval' | 'forbidden';
  /** Codex reason text (forbidden: why; needs_approval: what asked) */
  reason?: string;
  /** skip → the action; forbidden → Deny; needs_approval → the action once approved */
  action: Action;
  proposed_amendment?: string[];
  available_decisions: ReviewDecision[];
  /** "file:line" of the deciding rule, or "heuristic:<name>" */
  matched_rule?: string;
  /** the session-approval cache key (shell + canonical command + cwd + requested permissions); empty for an
   * exec-time check that asks nobody (never looked up) */
  cache_key: string;
  /** a literal command found inside a complex script: it can deny or ask, but how the script runs is
   * the whole script's entry's business (it is checked, not executed as its own step) */
  literal?: boolean;
  /** a file the script writes by a redirection, asked up front (a script decided per exec) */
  write?: boolean;
  /** not remembered for the exec gate unless a person answered it (a literal of a script decided per exec) */
  unsettled?: boolean;
  /** an exec of the run's start-up phase (the login profile, rc files): the audit log says so */
  phase?: 'start-up';
  /** an exec-time Run that holds for any argv of the same file, path, name and run (src/decide/reuse.ts) */
  reusable?: boolean;
  /** an exec-time Run that holds for any argv of the same file, path, name and run below this process (a
   * program running its own files: src/decide/reuse.ts, reusableInScope) */
  reuseScope?: ReuseScope;
  /** a `#!` script's exec: what the kernel runs (its interpreter, the interpreter's argument, the script and
   * its arguments), whichever of the two decided; the audit log names it */
  runs?: string[];
  /** an exec-time decision that read where the command came from and found every ancestor carrying the model's
   * text (src/decide/provenance.ts, `widen`): an allow rule's escalation out of the sandbox rests on that reading */
  widened?: true;
}

export interface ScriptResult {
  complex: boolean;
  /** bash can parse the script (a start-up phase needs this: src/exec/start-up-gate.ts) */
  parses: boolean;
  /** the script is decided per exec (docs/strict.md): run it in the read-only sandbox, or in the turn sandbox
   * once a person agreed to its asked writes */
  perExec?: boolean;
  /** where a per-exec script runs (ScriptDecision.per_exec_sandbox: decided once, in src/decide/per-exec.ts) */
  perExecSandbox?: SandboxPolicy | null;
  /** that sandbox is stricter than the turn's (ScriptDecision.sandbox_narrowed) */
  sandboxNarrowed?: boolean;
  /** the run's own shell also runs text the model did not write in the script: a sourced file, an eval or a
   * command string known only at run time, a command named at run time (ExecContext.foreignText) */
  foreignText?: true;
  subcommands: SubcommandResult[];
}

export interface SessionPolicies {
  approvalPolicy: ApprovalPolicy;
  sandboxPolicy: SandboxPolicy;
  gitReadOnly: boolean;
}

export interface ExecContext extends SessionPolicies {
  sandboxPermissions: SandboxPermissions;
  additionalPermissions?: PermissionProfile;
  /** what pre-flight (or an earlier exec prompt) of the same run settled for this argv + cwd: reused
   * only when the exec-time checks (code loading, writable program, skill permissions) add nothing */
  settled?: Action;
  /** the run's own shell runs text that is not the model's own (ScriptResult.foreignText, of this run or of
   * the run it is nested in): its commands are judged as the model's (the heuristics), since one bash cannot
   * be told apart from itself, but none leaves the sandbox by a rule, as a script file run by `sh` does not */
  foreignText?: boolean;
  /** how the exec'ing process and its ancestors were started (read from /proc by the daemon), asked only
   * when the decision depends on where the command came from (src/decide/provenance.ts) */
  ancestry?: () => Ancestry | null;
  /** the exec'ing process is the one `ancestry` starts at (a kernel-layer request): a Run may be reused below
   * the program running its own files that made it (SubcommandResult.reuseScope) */
  scoped?: boolean;
  /** folders the run's sandbox lets it write besides the policy's (its working folders, $TMPDIR, the runtime
   * folder): a program there is never escalated without asking (src/decide/exec-writable.ts); given, they
   * stand for the exec's cwd (`cd /usr` does not make /usr writable) */
  writable?: readonly string[];
}

export interface Decider {
  /** a short description for `gate status` */
  readonly name: string;
  preflight(req: PreflightRequest, ctx: SessionPolicies): ScriptResult;
  exec(req: ExecRequest, ctx: ExecContext): SubcommandResult;
  /** an exec of a run's start-up phase: forbidden rules only, never a prompt (src/decide/start-up.ts) */
  startUp(req: ExecRequest, sandboxed: boolean): SubcommandResult;
}

export function sourceLabel(s: DecisionSource[]): string | undefined {
  const first = s[0];
  if (!first) return undefined;
  if (first.kind === 'rule') return `${first.file}:${first.line}`;
  if (first.kind === 'heuristic') return `heuristic:${first.name}`;
  return first.kind;
}
