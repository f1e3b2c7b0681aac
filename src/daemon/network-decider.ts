/**
 * The daemon's NetworkDecider (src/network/types.ts): one decision per new host:port a run's sandbox
 * connects to, through the same pipeline as commands — the live policy's network_rules and the config
 * lists (src/decide/network.ts, pure), then grants, then a prompt through the approval broker, which
 * shows it on every approval surface (`gate approve`, the daemon's terminal, the inline PTY approver, MCP
 * elicitation, the JSON-RPC host). Answers: this command only (a grant of the run, ended by run-finished),
 * the session, or a saved `network_rule` (appended like prefix-rule amendments, then reloaded). With no
 * approver attached the connection is refused at once. Every decision is one audit record, and every
 * closed connection another with its bytes.
 * Trust: the request was built by the proxy (host, port, protocol from the sandboxed program: untrusted;
 * the run from the socket it came in on). Nothing here resolves or connects; a broken rules file refuses
 * everything, as it refuses every run.
 */
import { decideNetwork, type NetworkDecision, type NetworkLists } from '../decide/index.js';
import type { ApprovalPolicy } from '../decide/index.js';
import type { ConnectionClosed, ConnectionDecision, ConnectionDecisionSource, ConnectionRequest, NetworkDecider } from '../network/index.js';
import { type AuditRecord, isApproval, reviewDecisionKind } from '../protocol/index.js';
import { normalizeHost, type NetworkAmendment, type NetworkRule } from '../rules/index.js';
import type { ApprovalBroker } from './approvals.js';
import type { AuditLog } from './audit.js';
import { networkPrompt, networkRefusal } from './network-prompt.js';
import type { RunTable } from './runs.js';

export interface NetworkDeciderDeps {
  /** the live policy's network rules */
  rules(): readonly NetworkRule[];
  /** why nothing may be decided now (a broken rules or config file), or undefined */
  broken(): string | undefined;
  approvalPolicy(): ApprovalPolicy;
  lists(): NetworkLists;
  approvalTimeoutMs(): number;
  runs: RunTable;
  broker: ApprovalBroker;
  audit: AuditLog;
  /** append the network_rule to the default rules file (and reload); resolves with the line */
  amend?(rule: NetworkAmendment): Promise<string>;
  log(line: string): void;
}

/** Who answered a prompt, and how (the audit record's approval fields). */
interface Answered {
  approvalId: string;
  approver: string;
  answer: string;
}

interface Asking {
  decided: Promise<ConnectionDecision>;
  waiters: number;
  approvalId?: string;
}

/** A run's grants (approved for this run) and refusals (a person denied it for this run), by host:port. */
interface RunNetwork {
  granted: Set<string>;
  refused: Map<string, string>;
}

export class DaemonNetworkDecider implements NetworkDecider {
  private readonly session = new Set<string>();
  private readonly byRun = new Map<string, RunNetwork>();
  private readonly asking = new Map<string, Asking>();
  /** counted for `gate status` and tests */
  readonly counters = { decided: 0, allowed: 0, denied: 0, asked: 0 };

  constructor(private readonly d: NetworkDeciderDeps) {}

  async decide(request: ConnectionRequest, signal: AbortSignal): Promise<ConnectionDecision> {
    this.counters.decided++;
    let host: string;
    try {
      host = normalizeHost(request.host);
    } catch {
      return this.done(request, request.host, { decision: 'deny', source: 'policy', reason: 'not a host name or IP address' });
    }
    if (!Number.isInteger(request.port) || request.port < 1 || request.port > 65535)
      return this.done(request, host, { decision: 'deny', source: 'policy', reason: `invalid port ${String(request.port)}` });
    const broken = this.d.broken();
    if (broken) return this.done(request, host, { decision: 'deny', source: 'policy', reason: broken });
    const key = `${host}:${request.port}`;
    // a finished (or unknown) run's grants and refusals end with it (runs.ts, `live`)
    const live = this.d.runs.live(request.runId);
    const mine = live ? this.byRun.get(request.runId) : undefined;
    if (!live) this.byRun.delete(request.runId);
    const granted = mine?.granted.has(key) ? 'run' : this.session.has(key) ? 'session' : undefined;
    const d = decideNetwork({
      host,
      port: request.port,
      protocol: request.protocol,
      addresses: request.addresses,
      rules: this.d.rules(),
      lists: this.d.lists(),
      granted,
      approvalPolicy: this.d.approvalPolicy(),
    });
    if (d.decision !== 'ask') return this.done(request, host, decisionOf(d));
    const refused = mine?.refused.get(key);
    if (refused) return this.done(request, host, { decision: 'deny', source: 'approval', reason: `${refused} (earlier in this run)`, approvalId: undefined });
    if (signal.aborted) return this.done(request, host, { decision: 'deny', source: 'approval', reason: 'the connection went away before it was decided' });
    // one prompt per run and host:port, however many connections wait for it
    const askKey = `${request.runId}\0${key}`;
    let a = this.asking.get(askKey);
    if (!a) {
      const made: Asking = { waiters: 0, decided: Promise.resolve() as unknown as Promise<ConnectionDecision> };
      made.decided = this.ask(request, host, d, made).finally(() => this.asking.delete(askKey));
      this.asking.set(askKey, (a = made));
    }
    const asking = a;
    asking.waiters++;
    const gone = (): void => {
      if (--asking.waiters === 0 && asking.approvalId) this.d.broker.cancel([asking.approvalId], 'withdrawn: the connection went away');
    };
    signal.addEventListener('abort', gone, { once: true });
    try {
      return await asking.decided;
    } finally {
      signal.removeEventListener('abort', gone);
      if (!signal.aborted) asking.waiters--;
    }
  }

  /** One audit record per closed connection: what it carried, and how it had been decided. */
  closed(r: ConnectionClosed): void {
    const run = this.d.runs.has(r.request.runId) ? this.d.runs.get(r.request.runId) : undefined;
    this.d.audit.write({
      ...recordBase(r.request, r.request.host, run?.cwd),
      decision: r.decided.decision,
      source: r.decided.source,
      ...(r.decided.rule ? { rule: r.decided.rule } : {}),
      bytes_up: r.bytesUp,
      bytes_down: r.bytesDown,
      duration_ms: r.durationMs,
      ...(r.request.addresses.length ? { addresses: r.request.addresses } : {}),
      // why the proxy failed or refused a connection the decision allowed (it did not resolve, it resolved to
      // a local range no rule names, the TLS name differed, the destination refused)
      ...(r.error ? { error: r.error } : {}),
      detail: 'closed',
    });
  }

  /** run-finished: what was approved (or refused) for this run alone ends with it. */
  endRun(runId: string): void {
    this.byRun.delete(runId);
  }

  /** The prompt, its answer's effects, and the decision. */
  private async ask(request: ConnectionRequest, host: string, d: NetworkDecision, a: Asking): Promise<ConnectionDecision> {
    this.counters.asked++;
    const run = this.d.runs.has(request.runId) ? this.d.runs.get(request.runId) : undefined;
    const key = `${host}:${request.port}`;
    const { runId, port, protocol } = request;
    const asked = this.d.broker.ask(networkPrompt({ runId, run, host, port, protocol, reason: d.reason, rule: d.rule }));
    a.approvalId = asked.approval_id;
    const o = await asked.done;
    const answer: Answered = { approvalId: o.approval_id, approver: o.approver, answer: reviewDecisionKind(o.decision) };
    const approved = !o.auto && isApproval(o.decision);
    const live = this.d.runs.live(request.runId);
    const own = (): RunNetwork => {
      let r = this.byRun.get(request.runId);
      if (!r) this.byRun.set(request.runId, (r = { granted: new Set(), refused: new Map() }));
      return r;
    };
    if (!approved) {
      const reason = networkRefusal(o, this.d.approvalTimeoutMs(), d.reason);
      // a person's "no" holds for the rest of the run: its retries are not asked again
      if (!o.auto && live) own().refused.set(key, reason);
      if (!o.auto && typeof o.decision === 'object' && 'network_policy_amendment' in o.decision) await this.save(host, request, 'deny');
      return this.done(request, host, { decision: 'deny', source: 'approval', reason, approvalId: o.approval_id }, answer);
    }
    const kind = reviewDecisionKind(o.decision);
    let scope = 'for this command';
    if (kind === 'approved_for_session') {
      this.session.add(key);
      scope = 'for this session';
    } else if (kind === 'network_policy_amendment') {
      scope = (await this.save(host, request, 'allow')) ? 'and saved as a network_rule' : 'for this command (the network_rule could not be saved)';
      if (live) own().granted.add(key); // the rule may not be in force yet (or failed to save): this run has its answer
    } else if (live) own().granted.add(key);
    // a grant names no host for the proxy's local-address check (a person approves a name, not where it
    // resolves); a saved network_rule does (src/network/types.ts, "Who refuses what")
    const saved = scope === 'and saved as a network_rule';
    const decided: ConnectionDecision = { decision: 'allow', source: 'approval', reason: `approved ${scope}`, approvalId: o.approval_id, namesHost: saved };
    return this.done(request, host, decided, answer);
  }

  /** Append the amendment to the default rules file; false (and said in the log) when it failed. */
  private async save(host: string, request: ConnectionRequest, action: 'allow' | 'deny'): Promise<boolean> {
    if (!this.d.amend) {
      this.d.log(`network_rule for ${host} not saved: this daemon has no rules file to amend`);
      return false;
    }
    try {
      const line = await this.d.amend({ host, protocol: request.protocol, decision: action === 'allow' ? 'allow' : 'deny' });
      this.d.log(`amendment appended: ${line}`);
      return true;
    } catch (e) {
      this.d.log(`network_rule for ${host} could not be saved: ${(e as Error).message}`);
      return false;
    }
  }

  /** Audit the decision and give it. */
  private done(request: ConnectionRequest, host: string, v: ConnectionDecision, answer?: Answered): ConnectionDecision {
    if (v.decision === 'allow') this.counters.allowed++;
    else this.counters.denied++;
    const run = this.d.runs.has(request.runId) ? this.d.runs.get(request.runId) : undefined;
    this.d.audit.write({
      ...recordBase(request, host, run?.cwd),
      ...(run?.command ? { argv: run.command } : {}),
      decision: v.decision,
      source: v.source,
      ...(v.rule ? { rule: v.rule } : {}),
      ...(answer ? { approval_id: answer.approvalId, approver: answer.approver, answer: answer.answer } : {}),
      detail: v.reason,
    });
    return v;
  }
}

function recordBase(request: ConnectionRequest, host: string, cwd: string | undefined): Omit<AuditRecord, 'time' | 'session'> {
  return { kind: 'network', run_id: request.runId, ...(cwd ? { cwd } : {}), host, port: request.port, protocol: request.protocol };
}

function decisionOf(d: NetworkDecision): ConnectionDecision {
  const source: ConnectionDecisionSource = d.source;
  const v: ConnectionDecision = { decision: d.decision === 'allow' ? 'allow' : 'deny', reason: d.reason, source };
  if (d.rule) v.rule = d.rule;
  if (d.decision === 'allow') v.namesHost = d.namesHost;
  return v;
}
