/**
 * `available_decisions` for one prompt (Codex PR #12758 defaults, §6.2) and gate-sh's additions.
 *
 * Codex: `[approved, approved_execpolicy_amendment{prefix} if proposed, abort]`; additional permissions
 * requested → `[approved, abort]`; skill scripts → `[approved, approved_for_session, abort]`.
 * gate-sh adds:
 * - `denied` always (refuse this command, keep the script/turn going): refusing can never widen anything.
 * - `approved_for_session` unless the command is dangerous (a forced rm deserves a look every time) or
 *   cannot be inspected (complex script, eval/source): a session approval is keyed by shell, canonical
 *   command, cwd, execution and requested permissions (approval-key.ts), so it never covers a different
 *   command or a wider run.
 * Order: approvals first (narrowest first), then denied, then abort.
 */
import type { ReviewDecision } from '../protocol/index.js';

export interface DecisionsInput {
  proposedAmendment: string[] | null;
  additionalPermissions: boolean;
  skillScript?: boolean;
  dangerous?: boolean;
  opaque?: boolean;
}

/** Codex's defaults, exactly. */
export function codexAvailableDecisions(i: DecisionsInput): ReviewDecision[] {
  if (i.skillScript) return ['approved', 'approved_for_session', 'abort'];
  if (i.additionalPermissions) return ['approved', 'abort'];
  const out: ReviewDecision[] = ['approved'];
  if (i.proposedAmendment) out.push({ approved_execpolicy_amendment: { proposed_execpolicy_amendment: i.proposedAmendment } });
  out.push('abort');
  return out;
}

/** gate-sh's list: Codex's plus approved_for_session where safe and denied. */
export function availableDecisions(i: DecisionsInput): ReviewDecision[] {
  const out: ReviewDecision[] = ['approved'];
  if (i.skillScript || (!i.dangerous && !i.opaque)) out.push('approved_for_session');
  if (i.proposedAmendment && !i.additionalPermissions && !i.skillScript)
    out.push({ approved_execpolicy_amendment: { proposed_execpolicy_amendment: i.proposedAmendment } });
  out.push('denied', 'abort');
  return out;
}
