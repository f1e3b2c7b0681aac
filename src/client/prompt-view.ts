/**
 * How a prompt looks in a terminal, and the one-key answers. Shared by the foreground daemon, `gate approve`
 * and the inline PTY approver. Pure. Every field goes through visibleText (src/text/display.ts) here,
 * whoever built the prompt: a prompt's text comes from the agent's script and must not drive the terminal.
 */
import { type PromptEvent, type ReviewDecision, reviewDecisionKind } from '../protocol/index.js';
import { displayCommand, fit, PROMPT_MAX, secretAccessText, visibleText as v } from '../text/index.js';

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
  network_policy_amendment: '[p] allow and save a network_rule',
  denied: '[d] deny',
  abort: '[x] abort',
};

export function renderPrompt(p: PromptEvent, index?: number): string {
  const lines = [`── approval ${(index ?? p.number) !== undefined ? `#${index ?? p.number} ` : ''}${v(p.approval_id)} (${v(p.origin)}, run ${v(p.run_id)})`];
  // a network prompt: where the run connects first; the command and cwd are the run's that asked
  const net = p.network_approval_context;
  if (net) lines.push(`   connect: ${v(net.host)}${p.network_port !== undefined ? `:${p.network_port}` : ''} (${v(net.protocol)})`);
  lines.push(`   ${net ? 'by:     ' : 'command:'} ${promptCommand(p)}`, `   cwd:     ${v(p.cwd)}`);
  if (p.reason) lines.push(`   reason:  ${fitted(p.reason)}`);
  if (p.matched_rule) lines.push(`   rule:    ${v(p.matched_rule)}`);
  if (p.risk_assessment) lines.push(`   risk:    ${v(p.risk_assessment.risk_level)}: ${v(p.risk_assessment.summary)}`);
  if (p.sandbox_permissions && p.sandbox_permissions !== 'use_default')
    lines.push(`   asks:    ${v(p.sandbox_permissions)}${p.requested_permissions ? ` ${v(JSON.stringify(p.requested_permissions))}` : ''}`);
  if (p.secret_access?.length) lines.push(`   secrets: ${secretAccessText(p.secret_access)}`);
  if (p.amendment_rule) lines.push(`   saves:   ${fitted(p.amendment_rule)}`);
  const keys = p.available_decisions.map((d) => LABEL[reviewDecisionKind(d)]);
  if (isCut(p)) keys.push(`[${VIEW_KEY}] view the whole command`);
  lines.push(`   ${keys.join('  ')}`);
  return lines.join('\n');
}

/** The key that shows a cut command whole (never cut without a way to see all). */
export const VIEW_KEY = 'v';

/** The command whole: every word, escaped as in the prompt (the daemon's `display` may be cut). */
function whole(p: Pick<PromptEvent, 'command' | 'display'>): string {
  return Array.isArray(p.command) && p.command.length ? displayCommand(p.command, Number.POSITIVE_INFINITY) : v(p.display);
}

/** Free text of a prompt (a reason quoting the command, a rule), visible and fitted like the command. */
function fitted(text: string): string {
  return fit(v(text), PROMPT_MAX + 200);
}

type Viewed = Pick<PromptEvent, 'command' | 'display' | 'amendment_rule' | 'reason'>;

/** Whether the prompt shows its command, its reason or the rule it would save cut: head and tail. */
export function isCut(p: Viewed): boolean {
  return promptCommand(p) !== whole(p) || [p.reason, p.amendment_rule].some((t) => t !== undefined && fitted(t) !== v(t));
}

/** The whole command (and the whole reason and rule when they were cut), for the view key. */
export function wholeCommand(p: Viewed): string {
  const w = whole(p);
  const more = [
    p.reason && fitted(p.reason) !== v(p.reason) ? `\n   the whole reason:\n${v(p.reason)}` : '',
    p.amendment_rule && fitted(p.amendment_rule) !== v(p.amendment_rule) ? `\n   the rule it would save:\n${v(p.amendment_rule)}` : '',
  ].join('');
  return `   whole command (${w.length} characters):\n${w}${more}\n   (end of the command)`;
}

/** A prompt's command as every surface shows it: visible, and fitted (head and tail with the length) if long. */
export function promptCommand(p: Pick<PromptEvent, 'display'>): string {
  return fit(v(p.display), PROMPT_MAX + 200);
}

/** The offered decision for a key, if that key is offered for this prompt. */
export function decisionForKey(p: PromptEvent, key: string): ReviewDecision | undefined {
  const k = key.toLowerCase();
  const kind = KEYS[k];
  if (!kind) return undefined;
  // `p` saves a rule: a prefix_rule for a command prompt, a network_rule for a network prompt
  const kinds = k === 'p' ? [kind, 'network_policy_amendment'] : [kind];
  return p.available_decisions.find((d) => kinds.includes(reviewDecisionKind(d)));
}
