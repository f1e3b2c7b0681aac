/**
 * Which destinations are not the public internet: loopback, private, link-local, carrier-grade NAT,
 * unspecified, multicast and reserved ranges (IPv4, IPv6, and IPv4 inside IPv6). A network decision
 * refuses them unless a rule or config entry names the host exactly (src/decide/network.ts); the proxy
 * uses the same test on the addresses it resolves (src/network/types.ts says who checks what). Pure:
 * node:net's BlockList and isIP compute, they do no I/O.
 */
import { BlockList, isIP } from 'node:net';

export type AddressClass = 'loopback' | 'private' | 'link-local' | 'unspecified' | 'reserved';

/** Ranges by class, most specific meaning first (a v4 range also covers its ::ffff:0:0/96 form). */
const RANGES: readonly (readonly [AddressClass, string, number, 'ipv4' | 'ipv6'])[] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'], // carrier-grade NAT: another network's hosts, not the internet
  ['private', 'fc00::', 7, 'ipv6'], // unique local
  ['private', 'fec0::', 10, 'ipv6'], // site-local (deprecated, still routed on some networks)
  ['link-local', '169.254.0.0', 16, 'ipv4'], // includes cloud metadata services
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '224.0.0.0', 4, 'ipv4'], // multicast
  ['reserved', '240.0.0.0', 4, 'ipv4'], // reserved and broadcast
  ['reserved', 'ff00::', 8, 'ipv6'], // multicast
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '64:ff9b::', 96, 'ipv6'], // NAT64: an IPv4 address in disguise, whichever it is
  ['reserved', '::', 96, 'ipv6'], // IPv4-compatible (::127.0.0.1): deprecated, and an IPv4 address in disguise
  ['reserved', '100::', 64, 'ipv6'],
];

const LISTS = new Map<AddressClass, BlockList>();
for (const [cls, net, prefix, type] of RANGES) {
  let list = LISTS.get(cls);
  if (!list) LISTS.set(cls, (list = new BlockList()));
  list.addSubnet(net, prefix, type);
}

/** An IP literal without brackets or zone (`fe80::1%eth0` → `fe80::1`), or undefined when it is not one. */
export function ipLiteral(host: string): string | undefined {
  let h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const pct = h.indexOf('%');
  if (pct >= 0) h = h.slice(0, pct);
  return isIP(h) ? h : undefined;
}

/** The class of a destination that is not public, or undefined for a public address (or not an address). */
export function addressClass(address: string): AddressClass | undefined {
  const ip = ipLiteral(address);
  if (ip === undefined) return undefined;
  const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of LISTS) if (list.check(ip, type)) return cls;
  return undefined;
}

/** A host name that is loopback by definition (RFC 6761), whatever a resolver says. */
export function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The first non-public destination of a connection: the literal host, a loopback name, or a resolved address. */
export function nonPublicDestination(host: string, addresses: readonly string[]): { address: string; class: AddressClass } | undefined {
  const literal = addressClass(host);
  if (literal) return { address: host, class: literal };
  if (isLoopbackName(host)) return { address: host, class: 'loopback' };
  for (const a of addresses) {
    const c = addressClass(a);
    if (c) return { address: a, class: c };
  }
  return undefined;
}

/** Why a connection to a non-public destination is refused: the one text of the decider and the proxy. */
export function nonPublicReason(host: string, d: { address: string; class: AddressClass }): string {
  const what = d.address === host ? `${host} is a ${d.class} address` : `${host} resolves to ${d.address}, a ${d.class} address`;
  return `${what}; only a network_rule or an allowed_domains entry naming '${host}' exactly opens it`;
}
