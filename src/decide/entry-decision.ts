/**
 * One entry → its SubcommandDecision: requirement (Codex texts), execution mode, action now and after
 * an approval, available_decisions and the proposed amendment.
 */
import { type Action, deny, escalate, type EscalationExecution, RUN } from '../protocol/index.js';
import type { DecideContext, DecidedCommand, SubcommandDecision, DecidedBy } from './types.js';
import { type RuleMatch, shlexQuote } from '../rules/index.js';
import { entryDecision, type Entry } from './entries.js';
import { amendmentForAllow, amendmentForPrompt } from './amendment-proposal.js';
import { promptReason, requirementFor } from './requirement.js';
import { availableDecisions } from './available-decisions.js';

export interface EntryDecisionOptions {
  ctx: DecideContext;
  /** Every evaluated command of the script is explicitly allowed: allowed entries may leave the sandbox. */
  bypass: boolean;
  /** Code-loading variables in the caller's environment. */
  loadingNames: string[];
  /** Codex §4.5: the model-requested prefix rule for these commands, if it would be offered. */
  requestedAmendment: (matches: Entry['evaluated'][number]['matches'], commands: string[][]) => string[] | null;
}

/** How an approved run executes: as the request asked. */
export function requestedExecution(ctx: DecideContext): EscalationExecution {
  if (ctx.sandboxPermissions === 'require_escalated') return { type: 'Unsandboxed' };
  if (ctx.sandboxPermissions === 'with_additional_permissions' && ctx.additionalPermissions) return { type: 'Permissions', profile: ctx.additionalPermissions };
  return { type: 'TurnDefault' };
}

export function actionFor(execution: EscalationExecution): Action {
  return execution.type === 'TurnDefault' ? RUN : escalate(execution);
}

export function decideEntry(e: Entry, index: number, o: EntryDecisionOptions): SubcommandDecision {
  const { ctx } = o;
  const matches: RuleMatch[] = [];
  const evaluated: DecidedCommand[] = [];
  const sources: DecidedBy[] = [];
  for (const x of e.evaluated) {
    matches.push(...x.matches);
    evaluated.push({ argv: x.argv, role: x.role, decision: x.decision, sources: x.sources });
  }
  evaluated.push(...e.extra);
  for (const x of evaluated) sources.push(...x.sources);
  let decision = entryDecision(e);
  let decidedBy = sources.find((s) => s.decision === decision) ?? sources[0];

  let execution: EscalationExecution = o.bypass ? { type: 'Unsandboxed' } : { type: 'TurnDefault' };
  let ownReason = e.ownReason;
  if (decision === 'allow' && execution.type !== 'TurnDefault' && o.loadingNames.length > 0) {
    decision = 'prompt'; // the rule approved the command, not the code these variables would load
    ownReason = `an unsandboxed run with code-loading variables: ${o.loadingNames.join(', ')}`;
    decidedBy = { type: 'heuristic', decision: 'prompt', name: 'code-loading', command: o.loadingNames };
  }
  if (decision === 'prompt') execution = requestedExecution(ctx);

  const requested = e.amendable ? o.requestedAmendment(matches, [e.argv]) : null;
  let requirement = requirementFor({
    command: e.argv,
    evaluation: { decision, matchedRules: matches },
    approvalPolicy: ctx.approvalPolicy,
    promptAmendment: requested ?? (e.amendable ? amendmentForPrompt(matches) : null),
    skipAmendment: e.amendable ? amendmentForAllow(matches) : null,
  });
  if (requirement.type === 'needs_approval' && requirement.reason === null && ownReason)
    // (the whole text of a complex script is already on screen: do not repeat it in the reason)
    requirement = { ...requirement, reason: e.kind === 'script' ? ownReason : `\`${withAssignments(e.assignments ?? [], e.argv)}\`: ${ownReason}` };
  if (requirement.type === 'skip') requirement = { ...requirement, bypass_sandbox: execution.type === 'Unsandboxed' };

  // Plain object literals (no conditional spreads): this runs once per subcommand, 10,000 times for big scripts.
  const forbidden = requirement.type === 'forbidden';
  // A prompt the approval policy may not show is denied with Codex's text; the denial also says what asked
  // (the rule's justification, the variables, the opaque command), for the model to read.
  const asked = forbidden && decision === 'prompt' ? (ownReason ?? promptReason(e.argv, matches)) : null;
  const out: SubcommandDecision = {
    index,
    argv: e.argv,
    kind: e.kind,
    // effective: a prompt the approval policy may not show is forbidden
    decision: forbidden ? 'forbidden' : decision,
    decided_by: decidedBy,
    evaluated,
    requirement,
    proposed_execpolicy_amendment: requirement.type === 'forbidden' ? null : requirement.proposed_execpolicy_amendment,
    execution: forbidden ? null : execution,
    action:
      requirement.type === 'forbidden'
        ? deny(asked ? `${requirement.reason}: ${asked}` : requirement.reason)
        : requirement.type === 'skip'
          ? actionFor(execution)
          : 'prompt',
  };
  if (requirement.type === 'needs_approval') {
    out.on_approval = actionFor(execution);
    out.available_decisions = availableDecisions({
      proposedAmendment: requirement.proposed_execpolicy_amendment,
      additionalPermissions: ctx.sandboxPermissions === 'with_additional_permissions',
      skillScript: ctx.skillScript,
      dangerous: e.danger !== undefined,
      opaque: e.opaqueKind !== undefined || e.kind !== 'plain',
    });
  }
  if (e.danger) out.danger = e.danger;
  if (e.opaqueKind) (out.opaque = e.opaque ?? e.opaqueKind), (out.opaque_kind = e.opaqueKind);
  if (e.assignments) out.assignments = e.assignments;
  return out;
}

/** `NAME=value cmd args` as bash reads it back: an assignment is its source text as written (`X="a b"`),
 * never quoted whole (`'LD_PRELOAD=x' make` would be a command named `LD_PRELOAD=x`, not the assignment decided). */
function withAssignments(assignments: readonly string[], argv: readonly string[]): string {
  return [...assignments, ...argv.map(shlexQuote)].join(' ');
}
