/**
 * The protocol/ layer's public surface: other layers import from here, files inside protocol/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: the wire: every channel's messages (request, approval, escalation frames, plan), the audit
 * record, the codec, the validators and the constants shared with C. Types and pure functions; the
 * validators are the trust boundary for what arrives on a socket.
 */
export {
  type Action,
  deny,
  escalate,
  type EscalationExecution,
  formatAction,
  isApproval,
  type NetworkPolicyAmendment,
  type ReviewDecision,
  reviewDecisionKind,
  type ReviewDecisionKind,
  RUN,
} from './action.js';
export {
  APPROVAL_OPS,
  type ApprovalEvent,
  type ApprovalLine,
  type ApprovalOp,
  type ApprovalReplies,
  type ApprovalRequests,
  type ApproverKind,
  type NetworkApprovalContext,
  parseApproverKind,
  parseReviewDecision,
  type PromptEvent,
  type ResolvedEvent,
  type RiskAssessment,
  type SandboxNarrowing,
  type SecretAccess,
  type SessionJob,
  type SessionSandboxStatus,
} from './approval.js';
export type { AuditRecord } from './audit-record.js';
export { decode, Deframer, encode, encodePreflightReply, encodeText, type Envelope, frame, needsStream, newId, ProtocolError } from './codec.js';
export { isLossy } from './exec-gate-wire.js';
export {
  type Ack,
  CLIENT_REPLY_ROOM,
  type DecisionSource,
  type ErrorCode,
  type ErrorReply,
  type ExecReply,
  type ExecRequest,
  MAX_DATAGRAM,
  type Pending,
  type PreflightReply,
  type PreflightRequest,
  PROTOCOL_VERSION,
  type Reply,
  type ReusedAudit,
  type ReusePreset,
  type ReuseScope,
  type SessionJoin,
  type SessionSandboxReply,
  type StartUpRequest,
  type SubcommandReply,
} from './messages.js';
export type { PlanReply, PlanRequest, StartUpFds } from './plan.js';
export type { SandboxPermissions, WirePermissionProfile, WireSandboxPolicy, WireSecretsSetting } from './sandbox-policy.js';
export {
  CALL_TEXTS,
  EXEC_GATE_VARIABLES,
  type ExecGateVariable,
  fill,
  FORWARDED_SIGNALS,
  HOLDER_LINES,
  HOLDER_UNAVAILABLE_ERRNOS,
  HOLDER_VERBS,
  MAX_AUDIT_RECORD,
  POLICY_EPOCH_FILE,
  PROVENANCE_PLUMBING,
  REQUEST_WAITS,
  RUN_CALL,
  RUNTIME_LAYOUT,
  SOCKET_MASK,
  TRUSTED_BWRAP_DIRS,
} from './shared-with-c.js';
export {
  validateExec,
  validateExecReused,
  validatePreflight,
  validateRunFinished,
  validateSessionSandbox,
  validateSessionSandboxStale,
  validateStartUpEnd,
} from './validate.js';
