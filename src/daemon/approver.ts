/**
 * Approver: anything that can answer prompts — the daemon's own terminal, a `gate approve` console on the
 * approval socket, and later MCP elicitation, a JSON-RPC host or a risk assessor. The broker notifies every
 * attached approver; each answers through ApprovalBroker.answer(). Nothing here is reachable from the
 * request channel.
 */
import type { ReviewDecision } from '../protocol/action.js';
import type { PermissionProfile } from '../sandbox/policy.js';

export interface PromptEvent {
  approval_id: string;
  run_id: string;
  /** preflight (a subcommand of a script) or exec (an intercepted exec) */
  origin: 'preflight' | 'exec';
  command: string[];
  /** the command as one display string (shell-quoted) */
  display: string;
  cwd: string;
  reason?: string;
  /** "file:line" of the rule that asked, or "heuristic:<name>" */
  matched_rule?: string;
  proposed_execpolicy_amendment?: string[];
  /** the exact line an amendment answer appends */
  amendment_rule?: string;
  available_decisions: ReviewDecision[];
  requested_permissions?: PermissionProfile;
  sandbox_permissions?: string;
  created_at: string;
  expires_at?: string;
  /** pid of the outermost gate-sh of the run (nested runs inherit it), for approvers that answer only their own runs */
  client_pid?: number;
  /** the configured risk assessor's view, when it answered in time (it never changes a decision) */
  risk_assessment?: RiskAssessment;
}

export interface RiskAssessment {
  summary: string;
  risk_level: 'low' | 'medium' | 'high';
}

/** What kind of frontend an approver is; `mcp-elicitation` approvers follow `reject.mcp_elicitations`. */
export type ApproverKind = 'console' | 'host' | 'mcp-elicitation';

export interface ResolvedEvent {
  approval_id: string;
  decision: ReviewDecision;
  /** who answered: an approver's name, or "daemon" for timeouts */
  approver: string;
  note?: string;
}

export interface Approver {
  readonly name: string;
  readonly kind?: ApproverKind;
  /** only these prompts are shown to (and may be answered by) this approver; default: every prompt */
  accepts?(p: PromptEvent): boolean;
  prompt(p: PromptEvent): void;
  resolved(r: ResolvedEvent): void;
}
