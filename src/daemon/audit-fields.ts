/**
 * How one decided subcommand is written to the audit log: the record's fields from `cwd` on, as JSON
 * without braces (AuditLog.writeEncoded), so a reused pre-flight decision is encoded once. Pure.
 */
import { type Action, type AuditRecord, type DecisionSource, formatAction, reviewDecisionKind } from '../protocol/index.js';
import type { SubcommandResult } from '../decide/index.js';
import type { ApprovalOutcome } from './approvals.js';

/** How one subcommand was decided: its Action, and who besides the policy had a say. */
export interface Decided {
  action: Action;
  outcome?: ApprovalOutcome;
  extraSource?: DecisionSource;
}

/** The execution mode an allowed Action runs with: Run runs in place, in the caller's (turn) sandbox. */
function executionMode(action: Action): string | undefined {
  if (action.type === 'Run') return 'TurnDefault';
  if (action.type !== 'Escalate') return undefined;
  const e = action.execution;
  return e.type === 'Permissions' ? `Permissions ${JSON.stringify(e.profile)}` : e.type;
}

/** A decision's audit record from `cwd` on, JSON without braces (AuditLog.writeEncoded). */
export function auditFields(s: SubcommandResult, { action, outcome, extraSource }: Decided, cwd: string): string {
  const rec: Omit<AuditRecord, 'time' | 'session' | 'kind' | 'run_id'> = {
    cwd,
    argv: s.argv,
    runs: s.runs,
    source: extraSource?.kind === 'session' || extraSource?.kind === 'parent-run' ? extraSource.kind : s.matched_rule,
    decision: s.decision,
    action: formatAction(action),
    execution: executionMode(action),
    phase: s.phase,
    approval_id: outcome?.approval_id,
    approver: outcome?.approver,
    answer: outcome ? reviewDecisionKind(outcome.decision) : undefined,
  };
  return JSON.stringify(rec).slice(1, -1);
}

/** An exec answered by a run's supervisor from a reused Run: its record's fields before cwd and argv. */
export function reusedHead(runId: string): string {
  return `"kind":"exec","run_id":${JSON.stringify(runId)}`;
}

/** The same record's fields after cwd and argv: the answer reused (src/daemon/reuse-grants.ts), marked so. */
export function reusedTail(source: string, decision: string): string {
  return `"source":${JSON.stringify(source)},"decision":${JSON.stringify(decision)},"action":"Run","execution":"TurnDefault","reused":true`;
}
