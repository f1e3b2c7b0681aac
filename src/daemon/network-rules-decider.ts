/**
 * The daemon's plain decision on each new connection of a run whose network is "rules", until the full
 * decision (config lists, prompts, grants, explain: issue 33) takes its place: the live policy's
 * `network_rule`s alone. A host a rule forbids is denied, a host a rule allows is allowed (a rule names the
 * host exactly, so a local address it resolves to is allowed too), any other host is denied. Each
 * connection's end is one audit record (host, port, protocol, decision, its source, bytes up and down).
 * Pure but for the audit write. Trust boundary: the request's host and port are the sandboxed client's
 * (already normalised by the proxy); the run id is the proxy's own.
 */
import type { Policy } from '../rules/index.js';
import type { ConnectionClosed, ConnectionRequest, ConnectionVerdict, NetworkDecider } from '../network/index.js';
import type { AuditLog } from './audit.js';

export function networkRulesDecider(policy: () => unknown, audit?: AuditLog): NetworkDecider {
  return {
    async decide(req: ConnectionRequest): Promise<ConnectionVerdict> {
      const { allowed, denied } = (policy() as Policy).networkDomains();
      if (denied.includes(req.host)) return { decision: 'deny', reason: `a network_rule forbids ${req.host}`, source: 'rule' };
      if (allowed.includes(req.host)) return { decision: 'allow', reason: `a network_rule allows ${req.host}`, source: 'rule', namesHost: true };
      return { decision: 'deny', reason: `no network rule allows ${req.host}`, source: 'default' };
    },
    closed(c: ConnectionClosed): void {
      const r = c.request;
      audit?.write({
        kind: 'decision',
        run_id: r.runId,
        argv: ['network', r.protocol, `${r.host.includes(':') ? `[${r.host}]` : r.host}:${r.port}`],
        source: c.verdict.rule ?? c.verdict.source,
        decision: c.verdict.decision,
        duration_ms: c.durationMs,
        detail: `${c.verdict.reason}; ${c.error ? `${c.error}; ` : ''}bytes up ${c.bytesUp}, down ${c.bytesDown}${r.addresses.length ? `; ${r.addresses.join(' ')}` : ''}`,
      });
    },
  };
}
