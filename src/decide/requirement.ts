/**
 * From an evaluation to what happens next (Codex `ExecApprovalRequirement`, §4.4): skip (run), needs
 * approval, or forbidden, with Codex's exact reason texts. Pure.
 */
import type { ApprovalPolicy } from './approval-policy.js';
import { type Evaluation, type RuleMatch, shlexJoin } from '../rules/index.js';

export type ExecApprovalRequirement =
  | { type: 'skip'; bypass_sandbox: boolean; proposed_execpolicy_amendment: string[] | null }
  | { type: 'needs_approval'; reason: string | null; proposed_execpolicy_amendment: string[] | null }
  | { type: 'forbidden'; reason: string };

export const PROMPT_CONFLICT_REASON = 'approval required by policy, but AskForApproval is set to Never';
export const REJECT_RULES_APPROVAL_REASON = 'approval required by policy rule, but AskForApproval::Granular.rules is false';
export const REJECT_SANDBOX_APPROVAL_REASON = 'approval required by policy, but AskForApproval::Granular.sandbox_approval is false';

type PrefixMatch = Extract<RuleMatch, { type: 'prefixRuleMatch' }>;

export function isPolicyRuleMatch(m: RuleMatch): m is PrefixMatch {
  return m.type === 'prefixRuleMatch';
}

/** A rule (not a heuristic) prompted: rejection then follows the rules switch, not the sandbox one. */
export function promptIsRule(matches: readonly RuleMatch[]): boolean {
  return matches.some((m) => isPolicyRuleMatch(m) && m.decision === 'prompt');
}

/** Why the approval policy forbids showing this prompt, or null when it may be shown. */
export function promptRejectedByPolicy(ap: ApprovalPolicy, fromRule: boolean): string | null {
  if (ap === 'never') return PROMPT_CONFLICT_REASON;
  if (typeof ap === 'string') return null;
  if (fromRule) return ap.reject.rules ? REJECT_RULES_APPROVAL_REASON : null;
  return ap.reject.sandbox_approval ? REJECT_SANDBOX_APPROVAL_REASON : null;
}

/** The longest matching prefix with this decision; on ties the last one (Rust `max_by_key`). */
function mostSpecific(matches: readonly RuleMatch[], d: 'prompt' | 'forbidden'): PrefixMatch | undefined {
  let best: PrefixMatch | undefined;
  for (const m of matches)
    if (isPolicyRuleMatch(m) && m.decision === d && (!best || m.matchedPrefix.length >= best.matchedPrefix.length)) best = m;
  return best;
}

/** `<cmd>` is the shlex-joined ORIGINAL argv (e.g. `bash -lc 'rm -rf /x'`). */
export function forbiddenReason(command: readonly string[], matches: readonly RuleMatch[]): string {
  const cmd = shlexJoin([...command]);
  const m = mostSpecific(matches, 'forbidden');
  if (!m) return `\`${cmd}\` rejected: blocked by policy`;
  if (m.justification !== undefined) return `\`${cmd}\` rejected: ${m.justification}`;
  return `\`${cmd}\` rejected: policy forbids commands starting with \`${shlexJoin([...m.matchedPrefix])}\``;
}

export function promptReason(command: readonly string[], matches: readonly RuleMatch[]): string | null {
  const m = mostSpecific(matches, 'prompt');
  if (!m) return null;
  const cmd = shlexJoin([...command]);
  return m.justification !== undefined ? `\`${cmd}\` requires approval: ${m.justification}` : `\`${cmd}\` requires approval by policy`;
}

/** Every evaluated command has an explicit `allow` rule: the only case a run may leave the sandbox. */
export function everyCommandExplicitlyAllowed(matches: readonly RuleMatch[]): boolean {
  return matches.length > 0 && matches.every((m) => isPolicyRuleMatch(m) && m.decision === 'allow');
}

export interface RequirementInput {
  /** The original argv, for reason texts. */
  command: readonly string[];
  evaluation: Evaluation;
  approvalPolicy: ApprovalPolicy;
  /** Proposed amendment when prompting / skipping (see amendment-proposal.ts). */
  promptAmendment: string[] | null;
  skipAmendment: string[] | null;
}

export function requirementFor(i: RequirementInput): ExecApprovalRequirement {
  const matches = i.evaluation.matchedRules;
  const decision = i.evaluation.decision ?? 'allow';
  if (decision === 'forbidden') return { type: 'forbidden', reason: forbiddenReason(i.command, matches) };
  if (decision === 'prompt') {
    const rejected = promptRejectedByPolicy(i.approvalPolicy, promptIsRule(matches));
    if (rejected) return { type: 'forbidden', reason: rejected };
    return { type: 'needs_approval', reason: promptReason(i.command, matches), proposed_execpolicy_amendment: i.promptAmendment };
  }
  return { type: 'skip', bypass_sandbox: everyCommandExplicitlyAllowed(matches), proposed_execpolicy_amendment: i.skipAmendment };
}
