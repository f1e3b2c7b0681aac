/**
 * What is decided, on both channels (DESIGN's names): the daemon's Action (with EscalationExecution, how an
 * escalated command runs) and a person's ReviewDecision. Pure types and tiny constructors. A rule's
 * Decision is the rule engine's (src/rules/decision.ts).
 */
import type { WirePermissionProfile } from './sandbox-policy.js';

/** How an approved command runs. */
export type EscalationExecution =
  | { type: 'Unsandboxed' }
  | { type: 'TurnDefault' }
  | { type: 'Permissions'; profile: WirePermissionProfile };

/** What the daemon decides per subcommand (pre-flight) and per exec (exec gate). */
export type Action =
  | { type: 'Run' }
  | { type: 'Escalate'; execution: EscalationExecution }
  | { type: 'Deny'; reason: string };

/** Codex's network policy amendment (a network prompt's "save it"): a `network_rule` for the host. */
export interface NetworkPolicyAmendment {
  host: string;
  action: 'allow' | 'deny';
}

/** A human's (or host's) answer to one prompt. `network_policy_amendment` answers a network prompt only
 * (Codex's ReviewDecision::NetworkPolicyAmendment, same shape). */
export type ReviewDecision =
  | 'approved'
  | 'approved_for_session'
  | { approved_execpolicy_amendment: { proposed_execpolicy_amendment: string[] } }
  | { network_policy_amendment: { network_policy_amendment: NetworkPolicyAmendment } }
  | 'denied'
  | 'abort';

export type ReviewDecisionKind = 'approved' | 'approved_for_session' | 'approved_execpolicy_amendment' | 'network_policy_amendment' | 'denied' | 'abort';

export function reviewDecisionKind(d: ReviewDecision): ReviewDecisionKind {
  if (typeof d === 'string') return d;
  return 'network_policy_amendment' in d ? 'network_policy_amendment' : 'approved_execpolicy_amendment';
}

export function isApproval(d: ReviewDecision): boolean {
  const k = reviewDecisionKind(d);
  if (k === 'network_policy_amendment') return (d as { network_policy_amendment: { network_policy_amendment: NetworkPolicyAmendment } }).network_policy_amendment.network_policy_amendment.action === 'allow';
  return k === 'approved' || k === 'approved_for_session' || k === 'approved_execpolicy_amendment';
}

export const RUN: Action = { type: 'Run' };
export const deny = (reason: string): Action => ({ type: 'Deny', reason });
export const escalate = (execution: EscalationExecution): Action => ({ type: 'Escalate', execution });

export function formatAction(a: Action): string {
  if (a.type === 'Run') return 'Run';
  if (a.type === 'Deny') return `Deny(${a.reason})`;
  return a.execution.type === 'Permissions' ? `Escalate(Permissions(${JSON.stringify(a.execution.profile)}))` : `Escalate(${a.execution.type})`;
}
