/** How a prompt looks in a terminal, and the one-key answers. Shared by the foreground daemon and `gate approve`. */
import { reviewDecisionKind, type ReviewDecision } from '../protocol/action.js';
import type { PromptEvent } from '../protocol/approval.js';

export const KEYS: Record<string, ReturnType<typeof reviewDecisionKind>> = {
  a: 'approved',
  s: 'approved_for_session',
  p: 'approved_execpolicy_amendment',
  d: 'denied',
  x: 'abort',
};

const LABEL: Record<string, string> = {
  approved: '[a] approve',
  approved_for_session: '[s] approve for this session',
  approved_execpolicy_amendment: '[p] approve and save the rule',
  denied: '[d] deny',
  abort: '[x] abort',
};

export function renderPrompt(p: PromptEvent, index?: number): string {
  const lines = [
    `── approval ${(index ?? p.number) !== undefined ? `#${index ?? p.number} ` : ''}${p.approval_id} (${p.origin}, run ${p.run_id})`,
    `   command: ${p.display}`,
    `   cwd:     ${p.cwd}`,
  ];
  if (p.reason) lines.push(`   reason:  ${p.reason}`);
  if (p.matched_rule) lines.push(`   rule:    ${p.matched_rule}`);
  if (p.risk_assessment) lines.push(`   risk:    ${p.risk_assessment.risk_level}: ${p.risk_assessment.summary}`);
  if (p.sandbox_permissions && p.sandbox_permissions !== 'use_default')
    lines.push(`   asks:    ${p.sandbox_permissions}${p.requested_permissions ? ` ${JSON.stringify(p.requested_permissions)}` : ''}`);
  if (p.amendment_rule) lines.push(`   saves:   ${p.amendment_rule}`);
  lines.push(`   ${p.available_decisions.map((d) => LABEL[reviewDecisionKind(d)]).join('  ')}`);
  return lines.join('\n');
}

/** The offered decision for a key, if that key is offered for this prompt. */
export function decisionForKey(p: PromptEvent, key: string): ReviewDecision | undefined {
  const kind = KEYS[key.toLowerCase()];
  return kind ? p.available_decisions.find((d) => reviewDecisionKind(d) === kind) : undefined;
}
