/**
 * One entry → its SubcommandAssessment: requirement (Codex texts), execution mode, action now and after
 * an approval, available_decisions and the proposed amendment.
 */
import { deny, escalate, RUN, type Action, type EscalationExecution } from '../protocol/action.js';
import type { AssessContext, EvaluatedCommand, SubcommandAssessment } from './assess-types.js';
import { entryDecision, type Entry } from './assess-entry.js';
import { amendmentForAllow, amendmentForPrompt } from './amendment-proposal.js';
import { requirementFor } from './requirement.js';
import { availableDecisions } from './assess-decisions.js';
import { shlexJoin } from './shlex.js';

export interface VerdictOptions {
  ctx: AssessContext;
  /** Every evaluated command of the script is explicitly allowed: allowed entries may leave the sandbox. */
  bypass: boolean;
  /** Code-loading variables in the caller's environment. */
  loadingNames: string[];
  /** Codex §4.5: the model-requested prefix rule for these commands, if it would be offered. */
  requestedAmendment: (matches: Entry['evaluated'][number]['matches'], commands: string[][]) => string[] | null;
}

/** How an approved run executes: as the request asked. */
export function requestedExecution(ctx: AssessContext): EscalationExecution {
  if (ctx.sandboxPermissions === 'require_escalated') return { type: 'Unsandboxed' };
  if (ctx.sandboxPermissions === 'with_additional_permissions' && ctx.additionalPermissions) return { type: 'Permissions', profile: ctx.additionalPermissions };
  return { type: 'TurnDefault' };
}

export function actionFor(execution: EscalationExecution): Action {
  return execution.type === 'TurnDefault' ? RUN : escalate(execution);
}

export function verdict(e: Entry, index: number, o: VerdictOptions): SubcommandAssessment {
  const { ctx } = o;
  const matches = e.evaluated.flatMap((x) => x.matches);
  let decision = entryDecision(e);
  const evaluated: EvaluatedCommand[] = [...e.evaluated.map(({ matches: _m, ...rest }) => rest), ...e.extra];
  const sources = evaluated.flatMap((x) => x.sources);
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
    requirement = { ...requirement, reason: `\`${shlexJoin([...(e.assignments ?? []), ...e.argv])}\`: ${ownReason}` };
  if (requirement.type === 'skip') requirement = { ...requirement, bypass_sandbox: execution.type === 'Unsandboxed' };

  const base = {
    index,
    argv: e.argv,
    kind: e.kind,
    // effective: a prompt the approval policy may not show is forbidden
    decision: requirement.type === 'forbidden' ? ('forbidden' as const) : decision,
    decided_by: decidedBy,
    evaluated,
    requirement,
    proposed_execpolicy_amendment: requirement.type === 'forbidden' ? null : requirement.proposed_execpolicy_amendment,
    ...(e.danger ? { danger: e.danger } : {}),
    ...(e.opaque ? { opaque: e.opaque } : {}),
    ...(e.assignments ? { assignments: e.assignments } : {}),
  };
  if (requirement.type === 'forbidden') return { ...base, execution: null, action: deny(requirement.reason) };
  if (requirement.type === 'skip') return { ...base, execution, action: actionFor(execution) };
  return {
    ...base,
    execution,
    action: 'prompt',
    on_approval: actionFor(execution),
    available_decisions: availableDecisions({
      proposedAmendment: requirement.proposed_execpolicy_amendment,
      additionalPermissions: ctx.sandboxPermissions === 'with_additional_permissions',
      skillScript: ctx.skillScript,
      dangerous: e.danger !== undefined,
      opaque: e.opaque !== undefined || e.kind !== 'plain',
    }),
  };
}
