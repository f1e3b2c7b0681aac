/**
 * Domain patterns of the configuration's network lists (`[network] allowed_domains / denied_domains`),
 * with Codex's proxy semantics: `example.com` is that host only, `*.example.com` its subdomains only,
 * `**.example.com` the apex and its subdomains; a bare `*` (or `**`) is refused, since it would open every
 * host by accident. Saved `network_rule`s take no wildcard at all (src/rules/network.ts). Pure.
 */
import { normalizeHost, PolicyError } from '../rules/index.js';
import { ipLiteral } from './network-address.js';

export interface DomainPattern {
  /** as written (trimmed), for messages and `gate explain` */
  text: string;
  kind: 'exact' | 'subdomains' | 'apex-and-subdomains';
  /** the canonical host or domain after the wildcard */
  domain: string;
}

/** Parse one pattern; throws an Error whose message says what is wrong with it. */
export function parseDomainPattern(raw: unknown): DomainPattern {
  if (typeof raw !== 'string') throw new Error(`a domain must be a string (got ${JSON.stringify(raw)})`);
  const text = raw.trim();
  if (text === '*' || text === '**' || text === '*.' || text === '**.')
    throw new Error(`'${text}' would match every host; list the domains instead (e.g. "**.example.com")`);
  const kind = text.startsWith('**.') ? 'apex-and-subdomains' : text.startsWith('*.') ? 'subdomains' : 'exact';
  const rest = kind === 'apex-and-subdomains' ? text.slice(3) : kind === 'subdomains' ? text.slice(2) : text;
  if (rest.includes('*')) throw new Error(`'${text}': a wildcard may only lead the pattern, as '*.' (subdomains) or '**.' (the domain and its subdomains)`);
  if (!/^\[/.test(rest) && /^[^:]*:[0-9]*$/.test(rest)) throw new Error(`'${text}': a domain takes no port (the rule covers every port)`);
  let domain: string;
  try {
    domain = normalizeHost(rest);
  } catch (e) {
    const why = e instanceof PolicyError ? e.reason.replace(/^invalid rule: network_rule host /, '') : (e as Error).message;
    throw new Error(`'${text}': ${why}`);
  }
  if (kind !== 'exact' && ipLiteral(domain)) throw new Error(`'${text}': an IP address has no subdomains; write it without the wildcard`);
  if (kind !== 'exact' && !domain.includes('.')) throw new Error(`'${text}' would match a whole top-level domain; name a domain under it`);
  return { text, kind, domain };
}

/** Parse a list (config `allowed_domains`/`denied_domains`); the error names the entry's index. */
export function parseDomainList(raw: unknown, key: string): DomainPattern[] {
  if (!Array.isArray(raw)) throw new Error(`'${key}' must be a list of domains`);
  return raw.map((r, i) => {
    try {
      return parseDomainPattern(r);
    } catch (e) {
      throw new Error(`'${key}' entry ${i + 1}: ${(e as Error).message}`);
    }
  });
}

/** Whether a canonical host (lower case, no trailing dot) matches the pattern. */
export function patternMatches(p: DomainPattern, host: string): boolean {
  if (p.kind === 'exact') return host === p.domain;
  const sub = host.length > p.domain.length && host.endsWith(`.${p.domain}`);
  return p.kind === 'subdomains' ? sub : sub || host === p.domain;
}
