/**
 * The JSON-RPC host API's shapes, after Codex's app-server (`item/commandExecution/requestApproval`,
 * camelCase params, v2 decision names). Pure.
 *
 * Decisions (either spelling is accepted in answers; availableDecisions uses Codex's):
 *   accept                                   ↔ approved
 *   acceptForSession                         ↔ approved_for_session
 *   {acceptWithExecpolicyAmendment: {execpolicy_amendment: [...]}}
 *                                            ↔ approved_execpolicy_amendment (always the proposed rule)
 *   {applyNetworkPolicyAmendment: {network_policy_amendment: {host, action}}}
 *                                            ↔ network_policy_amendment (a network prompt: saves a network_rule
 *                                              for the prompt's host; the action must be one offered)
 *   decline                                  ↔ denied
 *   cancel                                   ↔ abort
 * A network prompt carries Codex v2's `networkApprovalContext: {host, protocol}` (protocol http, https,
 * socks5Tcp, socks5Udp) and `proposedNetworkPolicyAmendments: [{host, action}]`, plus gate-sh's `networkPort`.
 */
import {
  type NetworkApprovalContext,
  type NetworkPolicyAmendment,
  type PromptEvent,
  type ReviewDecision,
  reviewDecisionKind,
  type ReviewDecisionKind,
} from '../protocol/index.js';
import { secretAccessText, visibleText } from '../text/index.js';
import { promptCommand } from '../client/index.js';

export const REQUEST_APPROVAL = 'item/commandExecution/requestApproval';
export const APPROVAL_RESOLVED = 'item/commandExecution/approvalResolved';
export const ANSWER_REJECTED = 'item/commandExecution/answerRejected';

export type HostDecision =
  | 'accept'
  | 'acceptForSession'
  | { acceptWithExecpolicyAmendment: { execpolicy_amendment: string[] } }
  | { applyNetworkPolicyAmendment: { network_policy_amendment: NetworkPolicyAmendment } }
  | 'decline'
  | 'cancel';

const TO_HOST: Record<ReviewDecisionKind, string> = {
  approved: 'accept',
  approved_for_session: 'acceptForSession',
  approved_execpolicy_amendment: 'acceptWithExecpolicyAmendment',
  network_policy_amendment: 'applyNetworkPolicyAmendment',
  denied: 'decline',
  abort: 'cancel',
};
const FROM_HOST: Record<string, ReviewDecisionKind> = Object.fromEntries(Object.entries(TO_HOST).map(([k, v]) => [v, k as ReviewDecisionKind]));

export function hostDecision(d: ReviewDecision): HostDecision {
  if (typeof d === 'object' && 'network_policy_amendment' in d)
    return { applyNetworkPolicyAmendment: { network_policy_amendment: { ...d.network_policy_amendment.network_policy_amendment } } };
  if (typeof d === 'object') return { acceptWithExecpolicyAmendment: { execpolicy_amendment: d.approved_execpolicy_amendment.proposed_execpolicy_amendment } };
  return TO_HOST[d] as HostDecision;
}

/** Codex v2's NetworkApprovalProtocol spelling (camelCase) of a core protocol. */
const V2_PROTOCOL: Record<NetworkApprovalContext['protocol'], string> = { http: 'http', https: 'https', socks5_tcp: 'socks5Tcp', socks5_udp: 'socks5Udp' };

/** A network prompt's Codex v2 fields (none for a command prompt). */
function networkParams(p: PromptEvent): Record<string, unknown> {
  const n = p.network_approval_context;
  if (!n) return {};
  return {
    networkApprovalContext: { host: visibleText(n.host), protocol: V2_PROTOCOL[n.protocol] },
    ...(p.network_port !== undefined ? { networkPort: p.network_port } : {}),
    proposedNetworkPolicyAmendments: (p.proposed_network_policy_amendments ?? []).map((a) => ({ host: visibleText(a.host), action: a.action })),
  };
}

/** The request a host receives for one prompt. */
export function approvalRequestParams(p: PromptEvent): Record<string, unknown> {
  return {
    approvalId: p.approval_id,
    runId: p.run_id,
    origin: p.origin,
    // the text a host shows is made visible here (src/text/display.ts); commandArgv is the exact data
    command: promptCommand(p),
    commandArgv: p.command,
    cwd: visibleText(p.cwd),
    reason: p.reason ? visibleText(p.reason) : null,
    matchedRule: p.matched_rule ? visibleText(p.matched_rule) : null,
    proposedExecpolicyAmendment: p.proposed_execpolicy_amendment ?? null,
    amendmentRule: p.amendment_rule ? visibleText(p.amendment_rule) : null,
    availableDecisions: p.available_decisions.map(hostDecision),
    ...(p.sandbox_permissions && p.sandbox_permissions !== 'use_default'
      ? { sandboxPermissions: p.sandbox_permissions, additionalPermissions: p.requested_permissions ?? null }
      : {}),
    ...(p.secret_access?.length ? { secretAccess: secretAccessText(p.secret_access) } : {}),
    ...(p.risk_assessment ? { riskAssessment: { summary: visibleText(p.risk_assessment.summary), riskLevel: p.risk_assessment.risk_level } } : {}),
    ...(p.expires_at ? { expiresAt: p.expires_at } : {}),
    ...networkParams(p),
  };
}

/** A host's `{decision}` → the ReviewDecision to answer with, or why it is not one. */
export function reviewDecisionFromHost(result: unknown): { decision: ReviewDecision } | { error: string } {
  const d = decisionOf(result);
  return typeof d === 'object' && 'error' in d ? d : { decision: d };
}

function decisionOf(result: unknown): ReviewDecision | { error: string } {
  const v = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>).decision : undefined;
  if (typeof v === 'string') {
    const kind = FROM_HOST[v] ?? (Object.hasOwn(TO_HOST, v) ? (v as ReviewDecisionKind) : undefined);
    if (kind === 'approved_execpolicy_amendment') return { approved_execpolicy_amendment: { proposed_execpolicy_amendment: [] } };
    if (kind === 'network_policy_amendment') return networkAmendment('allow');
    if (kind) return kind;
  } else if (v && typeof v === 'object' && !Array.isArray(v)) {
    // the proposed rule is always the one appended; a prefix the host sends is not used
    if ('acceptWithExecpolicyAmendment' in v || 'approved_execpolicy_amendment' in v)
      return { approved_execpolicy_amendment: { proposed_execpolicy_amendment: [] } };
    // a network amendment: its host is the prompt's; its action (allow, deny) must be one the prompt offers
    const net = (v as Record<string, unknown>).applyNetworkPolicyAmendment ?? (v as Record<string, unknown>).network_policy_amendment;
    if (net !== undefined) {
      const action = (net as { network_policy_amendment?: { action?: unknown } } | null)?.network_policy_amendment?.action ?? 'allow';
      if (action === 'allow' || action === 'deny') return networkAmendment(action);
      return { error: `invalid network_policy_amendment action ${JSON.stringify(action)}: expected allow or deny` };
    }
  }
  return {
    error: `invalid decision ${JSON.stringify(v)}: expected {"decision": accept | acceptForSession | acceptWithExecpolicyAmendment | applyNetworkPolicyAmendment | decline | cancel} (or approved, approved_for_session, approved_execpolicy_amendment, network_policy_amendment, denied, abort)`,
  };
}

function networkAmendment(action: 'allow' | 'deny'): ReviewDecision {
  return { network_policy_amendment: { network_policy_amendment: { host: '', action } } };
}

export function resolvedParams(r: { approval_id: string; decision: ReviewDecision; approver: string; note?: string }): Record<string, unknown> {
  return {
    approvalId: r.approval_id,
    decision: hostDecision(r.decision),
    reviewDecision: reviewDecisionKind(r.decision),
    approver: r.approver,
    ...(r.note ? { note: r.note } : {}),
  };
}

export { reviewDecisionKind };
