/**
 * Building what approvers see for one subcommand that needs a person: the prompt (command, cwd, reason,
 * rule, proposed amendment, available decisions, requested permissions), and the optional risk
 * assessor's advisory view of it (src/daemon/risk-assessor.ts; it never changes a decision). Pure but for
 * the risk call, which runs the configured assessor.
 */
import type { PromptEvent, RiskAssessment } from '../protocol/index.js';
import type { SubcommandResult } from '../decide/index.js';
import { formatAllowPrefixRule } from '../rules/index.js';
import type { GateConfig } from '../config/index.js';
import type { RunRecord } from './runs.js';
import { assessRisk } from './risk-assessor.js';

export type PromptDraft = Omit<PromptEvent, 'approval_id' | 'created_at'>;

export interface PromptInput {
  s: SubcommandResult;
  run: RunRecord | undefined;
  runId: string;
  origin: 'preflight' | 'exec';
  cwd: string;
  /** the command as one display string (displayCommand: hidden characters shown, head and tail if long) */
  display: string;
  /** the caller's own words (preflight `justification`), shown when no rule gave a reason */
  justification?: string;
}

export function promptFor({ s, run, runId, origin, cwd, display, justification }: PromptInput): PromptDraft {
  return {
    run_id: runId,
    origin,
    command: s.argv,
    display,
    cwd,
    // the caller's own words first when it gave any (Codex shows the justification); the gate's reason too
    reason: justification ? (s.reason && s.reason !== justification ? `${justification} (gate: ${s.reason})` : justification) : s.reason,
    matched_rule: s.matched_rule,
    proposed_execpolicy_amendment: s.proposed_amendment,
    amendment_rule: s.proposed_amendment ? formatAllowPrefixRule(s.proposed_amendment) : undefined,
    available_decisions: s.available_decisions,
    requested_permissions: run?.additional_permissions,
    sandbox_permissions: run?.sandbox_permissions,
    client_pid: run?.root_pid,
  };
}

/** The optional risk assessor's view of a prompt (only when someone will see it); advisory, never a decision. */
export async function riskFor(
  prompt: PromptDraft,
  approvalId: string,
  o: { assessor: GateConfig['risk_assessor']; seen(p: PromptEvent): boolean; log(line: string): void },
): Promise<RiskAssessment | undefined> {
  const assessor = o.assessor;
  if (assessor === undefined || !o.seen({ ...prompt, approval_id: approvalId, created_at: '' })) return undefined;
  const { command, display, cwd, reason, matched_rule, origin, sandbox_permissions } = prompt;
  return assessRisk(
    { command, display, cwd, reason, matched_rule, origin, sandbox_permissions },
    { assessor, onFailure: (why) => o.log(`${approvalId}: ${why}`) },
  );
}
