/**
 * A prompt as an MCP elicitation, and an elicitation result as a ReviewDecision. Pure.
 *
 * The message starts with Codex's exact sentence (`Allow agent to run \`<cmd>\` in \`<cwd>\`?`); the reason,
 * the matched rule and the risk assessment follow on their own lines. The schema is Codex's ("Execution
 * Permission Request" with an optional `reason`) plus an optional `decision` enum of the approvals offered
 * for this prompt, which a client may ignore: plain accept means `approved`.
 *   accept  → the chosen approval (approved_for_session, approved_execpolicy_amendment) or approved
 *   decline → denied (abort when denied is not offered)
 *   cancel  → abort
 * A network prompt (origin `network`) asks `Allow \`<command>\` in \`<cwd>\` to connect to \`<host>:<port>\`
 * (<protocol>)?`; its approvals are approved (this run only), approved_for_session and
 * network_policy_amendment (save a network_rule allowing the host).
 */
import { type PromptEvent, type ReviewDecision, reviewDecisionKind, type ReviewDecisionKind } from '../protocol/index.js';
import { codeSpan, secretAccessText, visibleText as v } from '../text/index.js';
import { promptCommand } from '../client/index.js';

export interface ElicitationParams {
  message: string;
  requestedSchema: {
    type: 'object';
    title: string;
    properties: Record<string, { type: 'string'; title?: string; description?: string; enum?: string[] }>;
  };
}

export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

const APPROVALS: ReviewDecisionKind[] = ['approved', 'approved_for_session', 'approved_execpolicy_amendment', 'network_policy_amendment'];

export function elicitationFor(p: PromptEvent): ElicitationParams {
  // hidden characters shown (src/text/display.ts); a code span that backticks in the command cannot end
  const net = p.network_approval_context;
  const lines = net
    ? [
        `Allow ${codeSpan(promptCommand(p))} in ${codeSpan(v(p.cwd))} to connect to ${codeSpan(`${v(net.host)}${p.network_port !== undefined ? `:${p.network_port}` : ''}`)} (${v(net.protocol)})?`,
      ]
    : [`Allow agent to run ${codeSpan(promptCommand(p))} in ${codeSpan(v(p.cwd))}?`];
  if (p.reason) lines.push(`Reason: ${v(p.reason)}`);
  if (p.matched_rule) lines.push(`Rule: ${v(p.matched_rule)}`);
  if (p.sandbox_permissions === 'require_escalated') lines.push('Asks: to run outside the sandbox');
  else if (p.sandbox_permissions === 'with_additional_permissions') lines.push(`Asks: additional permissions ${v(JSON.stringify(p.requested_permissions ?? {}))}`);
  if (p.secret_access?.length) lines.push(`Secrets: ${secretAccessText(p.secret_access)}`);
  if (p.risk_assessment) lines.push(`Risk: ${v(p.risk_assessment.risk_level)}: ${v(p.risk_assessment.summary)}`);
  if (p.amendment_rule) lines.push(`"${net ? 'network_policy_amendment' : 'approved_execpolicy_amendment'}" saves: ${v(p.amendment_rule)}`);
  if (net) lines.push('"approved" allows it for this command only (until it ends); "approved_for_session" for the session');
  const offered = p.available_decisions.map(reviewDecisionKind).filter((k) => APPROVALS.includes(k));
  return {
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      title: net ? 'Network Permission Request' : 'Execution Permission Request',
      properties: {
        reason: { type: 'string', description: 'Optional reason for allowing or denying execution' },
        ...(offered.length > 1 ? { decision: { type: 'string', description: 'How to approve (when accepting); default: approved', enum: offered } } : {}),
      },
    },
  };
}

/** The ReviewDecision an elicitation answer stands for, always one the prompt offers (or abort). */
export function decisionForElicitation(p: PromptEvent, a: ElicitationAnswer): ReviewDecision {
  const offered = (k: ReviewDecisionKind): ReviewDecision | undefined => p.available_decisions.find((d) => reviewDecisionKind(d) === k);
  if (a.action === 'accept') {
    const chosen = a.content?.decision;
    const k = APPROVALS.find((x) => x === chosen);
    return (k && offered(k)) || offered('approved') || 'abort';
  }
  if (a.action === 'decline') return offered('denied') ?? 'abort';
  return 'abort';
}
