/**
 * The approval channel's messages, declared once for the server (src/daemon/approval-server.ts), the
 * broker's approvers (src/daemon/approver.ts) and every client (src/client/approval-client.ts and its
 * users). JSON lines over `approval.sock`, a Unix stream socket in a folder no sandbox sees: this is where
 * people and hosts answer prompts, so nothing on the request channel reaches it.
 * A request is `{op, re?, ...fields}` (`re` is echoed on its reply); the daemon also sends events (prompt,
 * resolved) to an attached approver. Pure types and the two parsers of wire values the server checks.
 */
import type { WirePermissionProfile, WireSandboxPolicy } from './sandbox-policy.js';
import type { NetworkPolicyAmendment, ReviewDecision } from './action.js';

/** Codex's NetworkApprovalContext (core spelling: `socks5_tcp`; the JSON-RPC host writes v2's `socks5Tcp`). */
export interface NetworkApprovalContext {
  host: string;
  protocol: 'http' | 'https' | 'socks5_tcp' | 'socks5_udp';
}

/** A prompt, as every approver sees it (the `prompt` event). */
export interface PromptEvent {
  approval_id: string;
  /** the prompt's number in its daemon's session (1, 2, ...), for people to tell prompts apart */
  number?: number;
  run_id: string;
  /** preflight (a subcommand of a script), exec (an intercepted exec) or network (a new host:port the
   * run's sandbox connects to: `command` and `cwd` are then the run's, and network_* fields say where to) */
  origin: 'preflight' | 'exec' | 'network';
  command: string[];
  /** the command as one display string (src/text/display.ts: shell-quoted, hidden characters shown) */
  display: string;
  cwd: string;
  reason?: string;
  /** "file:line" of the rule that asked, or "heuristic:<name>" */
  matched_rule?: string;
  proposed_execpolicy_amendment?: string[];
  /** the exact line an amendment answer appends */
  amendment_rule?: string;
  available_decisions: ReviewDecision[];
  requested_permissions?: WirePermissionProfile;
  sandbox_permissions?: string;
  created_at: string;
  expires_at?: string;
  /** pid of the outermost gate-sh of the run (nested runs inherit it), for approvers that answer only their own runs */
  client_pid?: number;
  /** the configured risk assessor's view, when it answered in time (it never changes a decision) */
  risk_assessment?: RiskAssessment;
  /** a network prompt: the host and protocol asked for (Codex's shape), and the port */
  network_approval_context?: NetworkApprovalContext;
  network_port?: number;
  /** a network prompt: the amendments a `network_policy_amendment` answer may save (Codex's shape) */
  proposed_network_policy_amendments?: NetworkPolicyAmendment[];
  /** what the requested permissions open of the credential locations every sandbox hides
   * (src/sandbox/secrets.ts): shown on every surface (secretAccessText, src/text/display.ts) */
  secret_access?: SecretAccess[];
}

/** One hidden secret location a permission request opens: the location, the path named (the location or
 * a path inside it), read or write. Absolute paths. */
export interface SecretAccess {
  location: string;
  path: string;
  access: 'read' | 'write';
}

export interface RiskAssessment {
  summary: string;
  risk_level: 'low' | 'medium' | 'high';
}

/** What kind of frontend an approver is; `mcp-elicitation` approvers follow `reject.mcp_elicitations`. */
export type ApproverKind = 'console' | 'host' | 'mcp-elicitation';

/** A prompt was answered (the `resolved` event). */
export interface ResolvedEvent {
  approval_id: string;
  decision: ReviewDecision;
  /** who answered: an approver's name, or "daemon" for timeouts */
  approver: string;
  note?: string;
}

/** Events the daemon sends to an attached approver. */
export type ApprovalEvent = ({ type: 'prompt' } & PromptEvent) | ({ type: 'resolved' } & ResolvedEvent);

/** The wire form of a ReviewDecision in an answer: a kind, or Codex's `{approved_execpolicy_amendment: {...}}`. */
export type WireReviewDecision = ReviewDecision | 'approved_execpolicy_amendment';

/** Each operation's request fields (besides `op` and `re`). */
export interface ApprovalRequests {
  /** attach as an approver: prompt / resolved events follow. `descendants_of: pid` shows only prompts of
   * runs whose outermost gate-sh descends from that pid (an MCP server's own) */
  attach: { name?: string; kind?: ApproverKind; descendants_of?: number };
  /** first answer wins */
  answer: { approval_id: string; decision: WireReviewDecision };
  status: Record<string, never>;
  'config-get': Record<string, never>;
  'config-set': { key: string; value: string };
  /** force: stop even while runs or background jobs are active (each run's gate-sh then says why it ended) */
  stop: { force?: boolean };
  /** reload the rule files (and check config.toml) now */
  reload: Record<string, never>;
  /** every process of the session sandboxes (src/daemon/session-sandbox.ts) */
  jobs: Record<string, never>;
  /** kill one (host pid) or all of them */
  'jobs-kill': { target: number | 'all' };
  /** narrow the session's sandbox to at most `policy` while this connection stays open (null: withdraw it):
   * a host's own sandbox setting (Codex's sandbox state, through `gate mcp`). The policy in force is the
   * stricter of gate-sh's own and every narrowing; `by` and `why` are shown by `gate status` */
  'sandbox-narrow': { policy: unknown; by?: string; why?: string };
}

/** One host's narrowing of the session's sandbox (`sandbox-narrow`), as `gate status` shows it. */
export interface SandboxNarrowing {
  policy: WireSandboxPolicy;
  by: string;
  why?: string;
  since: string;
}

/** A process of a session sandbox (docs/sandbox.md, "Session sandboxes"). */
export interface SessionJob {
  /** the pid as the host (and `gate jobs kill`) sees it */
  pid: number;
  /** the pid inside the sandbox (what `$!` gave the command) */
  pid_in_sandbox: number;
  argv: string[];
  cwd: string;
  started_at: string;
  /** the run whose command started it (its GATE_RUN) */
  run_id?: string;
  /** the sandbox's key, shortened */
  sandbox: string;
  /** true once its command ended and it lives on as the holder's child */
  outlived_command: boolean;
}

/** The session sandboxes in `gate status` (the status object's `session_sandboxes`). */
export interface SessionSandboxStatus {
  sandboxes: {
    /** the key, shortened */
    key: string;
    holder_pid: number;
    network: 'loopback only' | 'host';
    /** 'held': built once, entered by each command; 'per command': each command builds them */
    mounts: 'held' | 'per command';
    created_at: string;
    jobs: number;
  }[];
  jobs: SessionJob[];
  /** why no session sandbox can be made here (every command gets a sandbox of its own) */
  unavailable?: string;
}

export type ApprovalOp = keyof ApprovalRequests;

/** Each operation's reply (an `error` line instead when it fails). */
export interface ApprovalReplies {
  attach: { type: 'attached'; name: string; kind: ApproverKind };
  answer: { type: 'answer'; approval_id: string; ok: boolean; error?: string };
  status: { type: 'status'; status: Record<string, unknown> };
  'config-get': { type: 'config'; config: Record<string, unknown> };
  'config-set': { type: 'config'; config: Record<string, unknown> };
  stop: { type: 'stopping' };
  reload: { type: 'reloaded'; files: string[]; error: string | null };
  jobs: { type: 'jobs'; jobs: SessionJob[] };
  'jobs-kill': { type: 'jobs-kill'; killed: number };
  /** gate-sh's own sandbox policy and the one in force now */
  'sandbox-narrow': { type: 'sandbox'; own: WireSandboxPolicy; effective: WireSandboxPolicy };
}

export interface ApprovalError {
  type: 'error';
  message: string;
}

/** Any line the daemon sends on the approval channel. */
export type ApprovalLine = (ApprovalReplies[ApprovalOp] | ApprovalError | ApprovalEvent) & { re?: number };

export const APPROVAL_OPS: readonly ApprovalOp[] = [
  'attach',
  'answer',
  'status',
  'config-get',
  'config-set',
  'stop',
  'reload',
  'jobs',
  'jobs-kill',
  'sandbox-narrow',
];

export function parseApproverKind(v: unknown): ApproverKind {
  if (v === undefined) return 'console';
  if (v === 'console' || v === 'host' || v === 'mcp-elicitation') return v;
  throw new Error(`invalid approver kind ${JSON.stringify(v)}: expected console, host or mcp-elicitation`);
}

/** Wire form of a ReviewDecision: a string kind, or Codex's `{approved_execpolicy_amendment: {...}}` /
 * `{network_policy_amendment: {...}}`. The broker answers with the prompt's own offered decision of that
 * kind, so what an amendment saves is always what the prompt proposed, never what the answer names. */
export function parseReviewDecision(v: unknown): ReviewDecision {
  if (v === 'approved' || v === 'approved_for_session' || v === 'denied' || v === 'abort') return v;
  if (v === 'approved_execpolicy_amendment') return { approved_execpolicy_amendment: { proposed_execpolicy_amendment: [] } };
  if (v === 'network_policy_amendment') return { network_policy_amendment: { network_policy_amendment: { host: '', action: 'allow' } } };
  if (v && typeof v === 'object' && 'approved_execpolicy_amendment' in v) return v as ReviewDecision;
  if (v && typeof v === 'object' && 'network_policy_amendment' in v) {
    // the action is kept (allow or deny: an answer must never turn one into the other); the host is the prompt's
    const inner = (v as { network_policy_amendment?: { network_policy_amendment?: { action?: unknown } } }).network_policy_amendment?.network_policy_amendment;
    const action = inner?.action ?? 'allow';
    if (action !== 'allow' && action !== 'deny') throw new Error(`invalid network_policy_amendment action ${JSON.stringify(action)}: expected allow or deny`);
    return { network_policy_amendment: { network_policy_amendment: { host: '', action } } };
  }
  throw new Error(
    `invalid decision ${JSON.stringify(v)}: expected approved, approved_for_session, approved_execpolicy_amendment, network_policy_amendment, denied or abort`,
  );
}
