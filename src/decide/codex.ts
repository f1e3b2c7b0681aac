/**
 * Codex's exact pipeline from an argv to an ExecApprovalRequirement (`core/src/exec_policy.rs`, §4):
 * commands_for_exec_policy → per-command evaluation with the unmatched-command fallback → requirement →
 * proposed amendment. gate-sh's per-subcommand decision (script.ts) builds on the same pieces; this file
 * is kept Codex-exact so that its parity is testable.
 */
import type { ApprovalPolicy } from './approval-policy.js';
import type { Evaluation, Fallback, MatchOptions, Policy } from '../rules/index.js';
import type { SandboxPolicy } from '../sandbox/index.js';
import type { SandboxPermissions } from '../protocol/index.js';
import { parseShellLcPlainCommands, parseShellLcSingleCommandPrefix } from '../script/index.js';
import { renderDecisionForUnmatchedCommand } from './unmatched.js';
import { requirementFor, type ExecApprovalRequirement } from './requirement.js';
import { amendmentForAllow, amendmentForPrompt, deriveRequestedAmendment } from './amendment-proposal.js';

export interface CodexContext {
  policy: Policy;
  approvalPolicy: ApprovalPolicy;
  sandboxPolicy: SandboxPolicy;
  sandboxPermissions: SandboxPermissions;
  /** The model-requested `prefix_rule` (tool parameter). */
  prefixRule?: readonly string[] | null;
  gitReadOnly?: boolean;
  /** gate-sh hardening: basename prompt/forbidden rules also catch path spellings. Codex: false. */
  hardened?: boolean;
}

export interface ExecPolicyCommands {
  commands: string[][];
  usedComplexParsing: boolean;
}

/** Codex `commands_for_exec_policy`: plain parse → heredoc single-command prefix → the whole argv. */
export function commandsForExecPolicy(argv: readonly string[]): ExecPolicyCommands {
  const plain = parseShellLcPlainCommands([...argv]);
  if (plain && plain.length > 0) return { commands: plain.map((c) => [...c]), usedComplexParsing: false };
  const heredoc = parseShellLcSingleCommandPrefix([...argv]);
  if (heredoc && heredoc.length > 0) return { commands: [[...heredoc]], usedComplexParsing: true };
  return { commands: [[...argv]], usedComplexParsing: false };
}

export interface CodexDecision extends ExecPolicyCommands {
  evaluation: Evaluation;
  requirement: ExecApprovalRequirement;
}

/** Codex `create_exec_approval_requirement_for_command`. */
export function execApprovalRequirement(argv: readonly string[], ctx: CodexContext): CodexDecision {
  const { commands, usedComplexParsing } = commandsForExecPolicy(argv);
  const fallback: Fallback = (cmd) =>
    renderDecisionForUnmatchedCommand(cmd, {
      approvalPolicy: ctx.approvalPolicy,
      sandboxPolicy: ctx.sandboxPolicy,
      sandboxPermissions: ctx.sandboxPermissions,
      usedComplexParsing,
      gitReadOnly: ctx.gitReadOnly,
    });
  const options: MatchOptions = { resolveHostExecutables: true, hardened: ctx.hardened ?? false };
  const evaluation = ctx.policy.checkMultiple(commands, options, fallback);
  const autoAmendment = !usedComplexParsing;
  const requested = autoAmendment
    ? deriveRequestedAmendment({ prefixRule: ctx.prefixRule, matchedRules: evaluation.matchedRules, policy: ctx.policy, commands, fallback, options })
    : null;
  const requirement = requirementFor({
    command: argv,
    evaluation,
    approvalPolicy: ctx.approvalPolicy,
    promptAmendment: requested ?? (autoAmendment ? amendmentForPrompt(evaluation.matchedRules) : null),
    skipAmendment: autoAmendment ? amendmentForAllow(evaluation.matchedRules) : null,
  });
  return { commands, usedComplexParsing, evaluation, requirement };
}
