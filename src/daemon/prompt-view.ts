/**
 * How a prompt looks in a terminal, and the one-key answers. Shared by the foreground daemon, `gate approve`
 * and the inline PTY approver. Pure. Every field goes through visibleText (src/protocol/display.ts) here,
 * whoever built the prompt: a prompt's text comes from the agent's script and must not drive the terminal.
 */
import { reviewDecisionKind, type ReviewDecision } from '../protocol/action.js';
import type { PromptEvent } from '../protocol/approval.js';
import { fit, PROMPT_MAX, secretAccessText, visibleText as v } from '../protocol/display.js';

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
    `── approval ${(index ?? p.number) !== undefined ? `#${index ?? p.number} ` : ''}${v(p.approval_id)} (${v(p.origin)}, run ${v(p.run_id)})`,
    `   command: ${promptCommand(p)}`,
    `   cwd:     ${v(p.cwd)}`,
  ];
  if (p.reason) lines.push(`   reason:  ${v(p.reason)}`);
  if (p.matched_rule) lines.push(`   rule:    ${v(p.matched_rule)}`);
  if (p.risk_assessment) lines.push(`   risk:    ${v(p.risk_assessment.risk_level)}: ${v(p.risk_assessment.summary)}`);
  if (p.sandbox_permissions && p.sandbox_permissions !== 'use_default')
    lines.push(`   asks:    ${v(p.sandbox_permissions)}${p.requested_permissions ? ` ${v(JSON.stringify(p.requested_permissions))}` : ''}`);
  if (p.secret_access?.length) lines.push(`   secrets: ${secretAccessText(p.secret_access)}`);
  if (p.amendment_rule) lines.push(`   saves:   ${v(p.amendment_rule)}`);
  lines.push(`   ${p.available_decisions.map((d) => LABEL[reviewDecisionKind(d)]).join('  ')}`);
  return lines.join('\n');
}

/** A prompt's command as every surface shows it: visible, and fitted (head and tail with the length) if long. */
export function promptCommand(p: Pick<PromptEvent, 'display'>): string {
  return fit(v(p.display), PROMPT_MAX + 200);
}

/** The offered decision for a key, if that key is offered for this prompt. */
export function decisionForKey(p: PromptEvent, key: string): ReviewDecision | undefined {
  const kind = KEYS[key.toLowerCase()];
  return kind ? p.available_decisions.find((d) => reviewDecisionKind(d) === kind) : undefined;
}
