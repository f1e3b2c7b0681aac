/**
 * `network_rule(host, protocol, decision, justification)`: host normalisation (newest Codex: stricter,
 * canonical IPv6) and compilation into allowed/denied domain lists (last writer wins).
 */
import type { Decision } from './decision.js';
import { PolicyError } from './error.js';
import type { RuleSource } from './rule.js';

export type NetworkProtocol = 'http' | 'https' | 'socks5_tcp' | 'socks5_udp';
export interface NetworkRule {
  host: string;
  protocol: NetworkProtocol;
  decision: Decision;
  justification?: string;
  /** where the network_rule call was written (absent for rules made in memory) */
  source?: RuleSource;
}


const PROTOCOLS: Record<string, NetworkProtocol> = {
  http: 'http', https: 'https', https_connect: 'https', 'http-connect': 'https', socks5_tcp: 'socks5_tcp', socks5_udp: 'socks5_udp',
};

export function parseProtocol(raw: string): NetworkProtocol {
  const p = Object.hasOwn(PROTOCOLS, raw) ? PROTOCOLS[raw] : undefined;
  if (!p) throw new PolicyError(`invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ${raw})`);
  return p;
}

export function parseNetworkDecision(raw: string): Decision {
  if (raw === 'allow' || raw === 'prompt' || raw === 'forbidden') return raw;
  if (raw === 'deny') return 'forbidden';
  throw new PolicyError(`invalid decision: ${raw}`);
}

const bad = (host: string, why: string): never => {
  throw new PolicyError(`invalid rule: network_rule host ${why} (got ${host})`);
};

/** Canonical host: lower-case, no port, no trailing dot, IPv6 in RFC 5952 form. Throws PolicyError. */
export function normalizeHost(raw: string): string {
  const host = raw.trim();
  if (host === '') throw new PolicyError('invalid rule: network_rule host cannot be empty');
  if (host.includes('://') || /[/?#]/.test(host)) {
    throw new PolicyError('invalid rule: network_rule host must be a hostname or IP literal (without scheme or path)');
  }
  if (/\s/.test(host)) throw new PolicyError('invalid rule: network_rule host cannot contain whitespace');
  if (host.includes('*')) throw new PolicyError('invalid rule: network_rule host must be a specific host; wildcards are not allowed');
  if (host.includes('@')) bad(host, 'must not contain user information');
  if (host.startsWith('[')) {
    const m = /^\[([^\]]*)\](?::(.*))?$/.exec(host);
    if (!m) return bad(host, 'has an unterminated IPv6 literal');
    if (m[2] !== undefined) checkPort(host, m[2]);
    return canonicalIpv6(host, m[1]);
  }
  const colons = host.split(':').length - 1;
  let name = host;
  if (colons === 1) {
    const [h, port] = host.split(':');
    checkPort(host, port);
    name = h;
  } else if (colons > 1) {
    return canonicalIpv6(host, host);
  }
  name = name.replace(/\.+$/, '').toLowerCase();
  if (name === '') bad(host, 'cannot be empty');
  if (!/^[a-z0-9_.-]+$/.test(name) && !/^[^\x00-\x20\x7f]+$/u.test(name)) bad(host, 'is not a valid hostname');
  return name;
}

function checkPort(host: string, port: string): void {
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) bad(host, 'has an invalid port');
}

function canonicalIpv6(host: string, literal: string): string {
  let addr = literal;
  let zone = '';
  const pct = literal.indexOf('%');
  if (pct >= 0) {
    addr = literal.slice(0, pct);
    zone = literal.slice(pct + 1);
    if (zone.startsWith('25')) zone = zone.slice(2); // `%25` is the URI encoding of `%`
    if (zone === '' || /[^A-Za-z0-9._~-]/.test(zone)) bad(host, 'has an invalid IPv6 zone');
  }
  let canonical: string;
  try {
    // WHATWG URL canonicalises IPv6 per RFC 5952 (pure computation, no I/O)
    canonical = new URL(`http://[${addr}]/`).hostname.slice(1, -1);
  } catch {
    return bad(host, 'is not a valid IP address');
  }
  return zone ? `${canonical}%${zone.toLowerCase()}` : canonical;
}

/** Allowed/denied lists: allow moves a host to the end of allowed (and out of denied); forbidden the reverse. */
export function compileDomains(rules: readonly NetworkRule[]): { allowed: string[]; denied: string[] } {
  const allowed: string[] = [];
  const denied: string[] = [];
  const drop = (list: string[], h: string) => {
    const k = list.indexOf(h);
    if (k >= 0) list.splice(k, 1);
  };
  for (const r of rules) {
    if (r.decision === 'allow') {
      drop(denied, r.host);
      drop(allowed, r.host);
      allowed.push(r.host);
    } else if (r.decision === 'forbidden') {
      drop(allowed, r.host);
      drop(denied, r.host);
      denied.push(r.host);
    }
  }
  return { allowed, denied };
}
