/**
 * The decision for a command no rule matches (Codex mainline `render_decision_for_unmatched_command`, §4.3).
 * Pure: the heuristics plus the approval policy and the turn's sandbox policy.
 */
import type { Decision } from '../rules/index.js';
import type { ApprovalPolicy } from './approval-policy.js';
import { isRestricted, type SandboxPolicy } from '../sandbox/index.js';
import type { SandboxPermissions } from '../protocol/index.js';
import { commandMightBeDangerous, dangerousCommand, isKnownSafeCommand } from '../heuristics/index.js';

export interface UnmatchedContext {
  approvalPolicy: ApprovalPolicy;
  sandboxPolicy: SandboxPolicy;
  sandboxPermissions: SandboxPermissions;
  /** The command came from the heredoc fallback or a complex script: it cannot be proven safe. */
  usedComplexParsing: boolean;
  gitReadOnly?: boolean;
  /** The caller already checks a script's commands one by one (gate-sh's decision): look for danger in
   * the argv only, instead of parsing a shell script again. Codex's pipeline leaves this off. */
  argvOnlyDanger?: boolean;
  /** The exec gate's reading of where the command came from (src/decide/provenance.ts): true when a
   * program running its own files made it. Then the heuristics do not ask about it (the rules still do);
   * asked only when a heuristic would ask. */
  programOwn?: () => boolean;
}

/** Why the heuristic decided: the name shown by `gate explain` and in the audit log. */
export type UnmatchedReason = 'known-safe' | 'dangerous' | 'approval-policy' | 'sandbox' | 'escalation-requested' | 'program';

export interface UnmatchedDecision {
  decision: Decision;
  reason: UnmatchedReason;
}

export function escalationRequested(p: SandboxPermissions): boolean {
  return p === 'require_escalated' || p === 'with_additional_permissions';
}

export function explainUnmatchedCommand(cmd: readonly string[], ctx: UnmatchedContext): UnmatchedDecision {
  const ap = ctx.approvalPolicy;
  if (ap === 'untrusted' && !ctx.usedComplexParsing && isKnownSafeCommand(cmd, { gitReadOnly: ctx.gitReadOnly }))
    return { decision: 'allow', reason: 'known-safe' };
  const dangerOpts = { historicGit: ctx.gitReadOnly === true };
  if (ctx.argvOnlyDanger ? dangerousCommand(cmd, dangerOpts) : commandMightBeDangerous(cmd, dangerOpts))
    return { decision: ap === 'never' ? 'forbidden' : 'prompt', reason: 'dangerous' };
  if (ap === 'never') return { decision: 'allow', reason: 'approval-policy' };
  if (ap === 'untrusted') return { decision: 'prompt', reason: 'approval-policy' };
  // on-request, on-failure (an alias of on-request in newest Codex) and reject/granular
  if (!isRestricted(ctx.sandboxPolicy)) return { decision: 'allow', reason: 'sandbox' };
  return escalationRequested(ctx.sandboxPermissions)
    ? { decision: 'prompt', reason: 'escalation-requested' }
    : { decision: 'allow', reason: 'sandbox' };
}

/** Codex `render_decision_for_unmatched_command`. */
export function renderDecisionForUnmatchedCommand(cmd: readonly string[], ctx: UnmatchedContext): Decision {
  return explainUnmatchedCommand(cmd, ctx).decision;
}
