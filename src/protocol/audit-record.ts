/**
 * One line of the audit log (JSONL), as the daemon writes it (src/daemon/audit.ts), the runs' supervisors
 * write their reuse records (shims/gate-reuse.c) and `gate log` reads it (src/client/audit-query.ts). A file
 * format people and scripts read, so its field names do not change. Types only.
 */
export interface AuditRecord {
  time: string;
  session: string;
  kind: 'decision' | 'exec' | 'run' | 'config' | 'reload' | 'daemon' | 'job' | 'network';
  run_id?: string;
  cwd?: string;
  argv?: string[];
  /** a `#!` script's exec: the program the kernel runs, with its arguments (interpreter, script, args) */
  runs?: string[];
  /** rule "file:line" or "heuristic:<name>" or "session" */
  source?: string;
  decision?: string;
  action?: string;
  execution?: string;
  approval_id?: string;
  approver?: string;
  answer?: string;
  exit_status?: number;
  duration_ms?: number;
  detail?: string;
  /** 'start-up': an exec of the login profile or rc files, before the script's first command */
  phase?: string;
  /** an exec the run's supervisor answered with a Run the daemon gave for that program before
   * (src/daemon/reuse-grants.ts) */
  reused?: boolean;
  /** a network record (src/daemon/network-decider.ts): one per connection decision (`decision` allow or
   * deny, `source` as src/network/types.ts's ConnectionDecisionSource, `detail` the reason), and one when an allowed
   * connection closes (`detail` "closed", with its bytes) */
  host?: string;
  port?: number;
  protocol?: string;
  /** `file:line` of the deciding network_rule */
  rule?: string;
  bytes_up?: number;
  bytes_down?: number;
  /** a closed connection: the addresses the proxy connected to, and why it failed when it did */
  addresses?: string[];
  error?: string;
}
