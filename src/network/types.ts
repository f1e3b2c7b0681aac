/**
 * The contract between the network proxy (what a sandboxed run connects to) and the daemon's decision on
 * each new connection (issue 33). Pure types.
 *
 * Trust boundary: a `ConnectionRequest` is built by the proxy from what the sandboxed program sent (host,
 * port, protocol: untrusted) and from what the daemon knows itself (the run, by the socket the connection
 * came in on; the addresses, by the proxy's own resolution). Nothing in it comes from a field the sandbox
 * can set about who it is.
 */
import type { NetworkProtocol } from '../rules/index.js';

export type { NetworkProtocol };

/** One new connection a sandboxed run asks the proxy for. */
export interface ConnectionRequest {
  /** the daemon's id of the run whose sandbox reached the proxy (from the socket it came in on) */
  runId: string;
  /** canonical host as asked (lower case, no trailing dot; IPv6 without brackets), as rules/network.ts normalises */
  host: string;
  port: number;
  /** http: plain HTTP forwarded; https: HTTP CONNECT; socks5_tcp / socks5_udp: SOCKS5 */
  protocol: NetworkProtocol;
  /**
   * the addresses the proxy resolved `host` to (the proxy connects only to these); [] when `host` is a
   * literal, or when the proxy asks before resolving (it should: a name the daemon refuses is then never
   * looked up, so DNS carries nothing about it; see "Who refuses what" below)
   */
  addresses: string[];
}

/** Where a connection decision came from (audited; `gate log --decision` filters on `decision`). */
export type VerdictSource = 'rule' | 'config' | 'granted-run' | 'granted-session' | 'approval' | 'policy' | 'default';

export interface ConnectionVerdict {
  decision: 'allow' | 'deny';
  /** one line for a person: shown in the 403 body, the SOCKS failure log and `gate-sh: network: denied ...` */
  reason: string;
  source: VerdictSource;
  /** `file:line` of the deciding network_rule, when a rule decided */
  rule?: string;
  /**
   * an allow only: a network_rule or an `allowed_domains` entry names this host exactly, so it may connect
   * to loopback, private or link-local addresses. Absent or false: the proxy refuses every such address it
   * resolves the host to (src/decide/network-address.ts `addressClass`), with `nonPublicReason`'s text.
   */
  localAllowed?: boolean;
  /** the prompt that decided it, when a person was asked (or the daemon answered for nobody) */
  approvalId?: string;
}

/*
 * Who refuses what (agreed between the proxy and the daemon's decider):
 * - The decider (src/daemon/network-decider.ts, src/decide/network.ts) decides on the host as asked: rules,
 *   config lists, grants, the approval policy. It refuses a literal non-public host (`127.0.0.1`, `[::1]`,
 *   `10.1.2.3`), the names `localhost` and `*.localhost`, and any non-public address in `addresses`, unless
 *   a rule or config entry names the host exactly (then `localAllowed` is true). It never resolves names.
 * - The proxy resolves a name only after an allow (so a refused name is never looked up), connects only to
 *   the addresses it resolved, and refuses any non-public one of them unless the verdict says
 *   `localAllowed` (a name that resolves to 127.0.0.1 through DNS rebinding is refused even though the
 *   name was allowed), failing closed when resolution fails. Its denial says
 *   `gate-sh: network: denied <host>:<port>: <reason>` with the verdict's reason, or `nonPublicReason`'s.
 * - Each connection is decided (the decider remembers grants, so a granted host:port is not asked twice
 *   in a run; concurrent asks for the same host:port of one run share one prompt), and reported once when
 *   it closes (`closed`) for the audit log; a refused connection is not reported again.
 */

/** What a connection carried, reported once when it closes (for the audit record). */
export interface ConnectionClosed {
  request: ConnectionRequest;
  verdict: ConnectionVerdict;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

/**
 * The daemon's side: decide a new connection (may wait for a person; `signal` aborts when the client went
 * away) and hear about it when it closes.
 */
export interface NetworkDecider {
  decide(request: ConnectionRequest, signal: AbortSignal): Promise<ConnectionVerdict>;
  closed(report: ConnectionClosed): void;
}
