/**
 * The on-failure rerun: a script that ran in the turn sandbox and failed on a sandbox denial (read-only
 * file system, permission denied on a write, no network) is offered to the approver as an escalation of
 * the whole script, with the denial as the justification, and rerun as approved, with a notice on stderr.
 *
 * Built on the existing request channel: the question is a second `preflight` of the same script with
 * `sandbox_permissions: "require_escalated"` and a `justification`, so the daemon's approval policy
 * decides whether a prompt may be shown at all (`never` → Deny, nothing reruns) and the answer is cached
 * under its own key (an escalated approval never covers a sandboxed one, nor the reverse).
 * Caveat, as in Codex: the script runs twice; whatever the first attempt did before failing stays done.
 */
import type { Action, EscalationExecution } from '../protocol/action.js';
import { denialReason, sandboxDenial } from './sandbox-denial.js';

export interface Attempt {
  status: number;
  /** the tail of the attempt's stderr (the evidence of a denial) */
  stderr: string;
}

export interface RerunOptions {
  first: Attempt;
  /** whether the first attempt ran under bubblewrap (an unsandboxed failure is never the sandbox's) */
  sandboxed: boolean;
  /** ask the daemon to escalate the whole script with this justification; the overall Action */
  ask(justification: string): Promise<Action>;
  /** run the script again as decided */
  rerun(execution: EscalationExecution): Promise<Attempt>;
  /** one line for the caller's stderr (prefixed `gate-sh: ` by the caller) */
  notice(line: string): void;
}

export async function rerunOnDenial(o: RerunOptions): Promise<Attempt> {
  if (!o.sandboxed) return o.first;
  const denial = sandboxDenial(o.first.status, o.first.stderr);
  if (!denial) return o.first;
  const why = denialReason(denial);
  let action: Action;
  try {
    action = await o.ask(`the sandboxed run failed (${why}); rerun it outside the sandbox?`);
  } catch (e) {
    o.notice(`the sandboxed run failed (${why}); could not ask to rerun it: ${(e as Error).message}`);
    return o.first;
  }
  if (action.type === 'Deny') {
    o.notice(`the sandboxed run failed (${why}); not rerun: ${action.reason}`);
    return o.first;
  }
  // Run or Escalate(TurnDefault): the same sandbox again would fail the same way.
  if (action.type === 'Run' || action.execution.type === 'TurnDefault') return o.first;
  o.notice(`the sandboxed run failed (${why}); rerunning as approved (${describe(action.execution)})`);
  return o.rerun(action.execution);
}

function describe(e: EscalationExecution): string {
  return e.type === 'Permissions' ? `with permissions ${JSON.stringify(e.profile)}` : 'outside the sandbox';
}
