/**
 * From a decision (a pre-flight entry's SubcommandDecision, an intercepted exec's ExecDecision, a start-up
 * exec's) to the one SubcommandResult the daemon acts on and puts on the wire. Pure.
 */
import { type Action, deny, type ReviewDecision } from '../protocol/index.js';
import type { ExecApprovalRequirement } from './requirement.js';
import { toWireSource, type DecidedBy } from './types.js';
import type { SubcommandResult } from './decider-types.js';

/** What every kind of decision has in common (the fields toResult reads). */
export interface Decided {
  argv: string[];
  decision: SubcommandResult['decision'];
  decided_by: DecidedBy;
  action: Action | 'prompt';
  on_approval?: Action;
  available_decisions?: ReviewDecision[];
  proposed_execpolicy_amendment?: string[] | null;
  requirement?: ExecApprovalRequirement;
  reason?: string;
}

/**
 * A denial by a forbidden rule with a justification says the justification and where the rule is, at
 * pre-flight and at exec time alike (the exec gate's own text is Codex's bare `Execution forbidden by
 * policy`): the model reads it ("use trash instead") wherever the denial happens.
 */
function citeRule(reason: string, by: DecidedBy): [Action, string] {
  if (by.type !== 'rule' || by.decision !== 'forbidden' || by.justification === undefined) return [deny(reason), reason];
  const cited = `${reason.includes(by.justification) ? reason : `${reason}: ${by.justification}`} (rule ${by.file}:${by.line})`;
  return [deny(cited), cited];
}

export function toResult(s: Decided, cacheKey: string, literal = false): SubcommandResult {
  const by = s.decided_by;
  const req = s.requirement;
  const given = s.reason ?? (req && req.type !== 'skip' ? req.reason ?? undefined : undefined);
  const [requirement, action, reason]: [SubcommandResult['requirement'], Action, string | undefined] =
    s.action === 'prompt'
      ? ['needs_approval', s.on_approval ?? { type: 'Deny', reason: 'approval gives no action' }, given]
      : s.action.type === 'Deny'
        ? ['forbidden', ...citeRule(s.action.reason, by)]
        : ['skip', s.action, given];
  // one object literal (no spreads of a built object: on the exec-gate path each costs microseconds)
  const result: SubcommandResult = {
    argv: s.argv,
    decision: s.decision,
    source: [toWireSource(by)],
    requirement,
    reason,
    action,
    matched_rule: by.type === 'rule' ? `${by.file}:${by.line}` : `heuristic:${by.name}`,
    available_decisions: s.available_decisions ?? [],
    cache_key: cacheKey,
  };
  if (s.proposed_execpolicy_amendment) result.proposed_amendment = s.proposed_execpolicy_amendment;
  if (literal) result.literal = true;
  return result;
}
