/**
 * The on-failure rerun: a script that ran in the turn sandbox and failed on a sandbox denial (read-only
 * file system, permission denied on a write, no network) is offered to the approver as an escalation of
 * the whole script, with the denial as the justification, and rerun as approved, with a notice on stderr.
 * The sequence is the run machine's (src/exec/run-call.ts; the daemon reads the denial from run-finished's
 * stderr tail); this file holds what the question and the answer say. Pure.
 *
 * Built on the existing request channel: the question is a second `preflight` of the same script with
 * `sandbox_permissions: "require_escalated"` and a `justification`, so the daemon's approval policy
 * decides whether a prompt may be shown at all (`never` → Deny, nothing reruns) and the answer is cached
 * under its own key (an escalated approval never covers a sandboxed one, nor the reverse).
 * Caveat, as in Codex: the script runs twice; whatever the first attempt did before failing stays done.
 */
import type { Action, EscalationExecution } from '../protocol/index.js';

/** What the approver's answer to a denial means: rerun or not, and the notice to print (pure; the native
 * gate-sh gets it from the daemon's plan). */
export function rerunDecision(action: Action, why: string): { rerun: boolean; notice?: string } {
  if (action.type === 'Deny') return { rerun: false, notice: `the sandboxed run failed (${why}); not rerun: ${action.reason}` };
  // Run or Escalate(TurnDefault): the same sandbox again would fail the same way.
  if (action.type === 'Run' || action.execution.type === 'TurnDefault') return { rerun: false };
  return { rerun: true, notice: `the sandboxed run failed (${why}); rerunning as approved (${describe(action.execution)})` };
}

/** The justification of the rerun's pre-flight for a denial (denialReason). */
export function rerunJustification(why: string): string {
  return `the sandboxed run failed (${why}); rerun it outside the sandbox?`;
}

function describe(e: EscalationExecution): string {
  return e.type === 'Permissions' ? `with permissions ${JSON.stringify(e.profile)}` : 'outside the sandbox';
}
