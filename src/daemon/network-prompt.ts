/**
 * A network prompt: what every approver sees when a run's sandbox connects to a host none of the rules or
 * config lists allows — the host, port and protocol (Codex's `network_approval_context`), the command of
 * the run that asked and its cwd, why it is asked, and the answers: this command only (`approved`: the
 * grant ends with the run), the session, or a saved `network_rule` (Codex's `network_policy_amendment`).
 * And what an answer that is not an approval means for the connection. Pure.
 */
import type { ReviewDecision } from '../protocol/index.js';
import { displayCommand } from '../text/index.js';
import { formatNetworkRule, type NetworkProtocol } from '../rules/index.js';
import type { ApprovalOutcome, PromptRequest } from './approvals.js';
import type { RunRecord } from './runs.js';

export interface NetworkPromptInput {
  runId: string;
  run: RunRecord | undefined;
  host: string;
  port: number;
  protocol: NetworkProtocol;
  /** why it is asked (src/decide/network.ts) */
  reason: string;
  /** `file:line` of a network_rule that asks */
  rule?: string;
}

/** The rule a `network_policy_amendment` answer appends (Codex writes the same line). */
export function networkAmendmentLine(host: string, protocol: NetworkProtocol): string {
  return formatNetworkRule({ host, protocol, decision: 'allow' });
}

export function networkPrompt(i: NetworkPromptInput): PromptRequest {
  const command = i.run?.command ?? [];
  const amendment = { host: i.host, action: 'allow' as const };
  const decisions: ReviewDecision[] = [
    'approved',
    'approved_for_session',
    { network_policy_amendment: { network_policy_amendment: amendment } },
    'denied',
    'abort',
  ];
  return {
    run_id: i.runId,
    origin: 'network',
    command,
    display: command.length ? displayCommand(command) : `(run ${i.runId}, no longer known)`,
    cwd: i.run?.cwd ?? '/',
    reason: `${i.reason}; ${i.run?.finished !== undefined ? 'its command has ended' : 'approve for this command only, the session, or save a network_rule'}`,
    matched_rule: i.rule,
    network_approval_context: { host: i.host, protocol: i.protocol },
    network_port: i.port,
    proposed_network_policy_amendments: [amendment],
    amendment_rule: networkAmendmentLine(i.host, i.protocol),
    available_decisions: decisions,
    client_pid: i.run?.root_pid,
  };
}

/** Why a connection that was asked about is refused, when the answer was not an approval. */
export function networkRefusal(o: ApprovalOutcome, timeoutMs: number, why: string): string {
  switch (o.auto) {
    case 'no-approver':
      return `approval needed but no approver is attached (run 'gate approve'): ${why}`;
    case 'timeout':
      return `approval timed out after ${(timeoutMs / 1000).toFixed(timeoutMs < 10_000 ? 1 : 0)} s`;
    case 'shutdown':
      return 'the gate daemon stopped before the approval was answered';
    case 'cancelled':
      return 'the connection went away before the approval was answered';
  }
  if (o.decision === 'abort') return 'User cancelled the connection';
  if (typeof o.decision === 'object' && 'network_policy_amendment' in o.decision) return 'User denied the host (saved as a network_rule)';
  return 'User denied the connection';
}
