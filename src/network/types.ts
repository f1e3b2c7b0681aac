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
  /** the addresses the proxy resolved `host` to (the proxy connects only to these); [] when `host` is a literal */
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
}

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
