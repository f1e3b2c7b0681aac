/**
 * The side effects of a person's answer, then the Action the client gets: `approved_for_session` enters
 * the session cache; `approved_execpolicy_amendment` appends the allow rule to the default rules file
 * (through the daemon's binding; a failed append is logged, the approval of this run stands).
 * Trust: only answers from the approval channel reach here (an automatic outcome changes nothing).
 */
import type { Action } from '../protocol/index.js';
import type { SubcommandResult } from '../decide/index.js';
import { shlexJoin } from '../rules/index.js';
import { outcomeAction } from './answer.js';
import type { ApprovalOutcome } from './approvals.js';
import type { SessionCache } from './session-cache.js';

export interface AnswerEffects {
  cache: SessionCache;
  /** append an allow prefix_rule to the default rules file; resolves with the rule line */
  amend(prefix: string[]): Promise<string>;
  log(line: string): void;
  /** read after the amendment (the configuration may change meanwhile) */
  approvalTimeoutMs(): number;
}

export async function applyAnswer(s: SubcommandResult, o: ApprovalOutcome, cmd: string, fx: AnswerEffects): Promise<Action> {
  const d = o.decision;
  if (!o.auto && d === 'approved_for_session') fx.cache.add(s.cache_key, o.approval_id);
  if (!o.auto && typeof d === 'object' && 'approved_execpolicy_amendment' in d) {
    const prefix = d.approved_execpolicy_amendment.proposed_execpolicy_amendment;
    try {
      const line = await fx.amend(prefix);
      fx.log(`amendment appended: ${line}`);
    } catch (e) {
      // The human approved this run; a failed append only loses the "next time" part. Say so loudly.
      fx.log(`amendment for ${shlexJoin(prefix)} could not be saved: ${(e as Error).message}`);
    }
  }
  return outcomeAction(o, s.action, cmd, fx.approvalTimeoutMs(), s.reason);
}
