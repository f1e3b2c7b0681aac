/**
 * Which addresses are the machine's own or its local networks' (issue 33, "never wider by accident"): a
 * sandboxed run that may reach `example.com` must not reach the host's loopback services, the LAN, the
 * cloud metadata service or a multicast group through a name that resolves there. Pure.
 *
 * Trust boundary: the address is the proxy's own resolution (or a literal the run sent); this only says
 * what range it is in. IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96)
 * IPv6 addresses are judged by the IPv4 address inside them.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const RANGES: readonly (readonly [string, number, 'ipv4' | 'ipv6', string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'CGNAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const LISTS = RANGES.map(([net, prefix, type, name]) => {
  const b = new BlockList();
  b.addSubnet(net, prefix, type);
  return { b, type, name };
});

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64), or null. */
function embeddedIPv4(addr: string): string | null {
  const a = addr.toLowerCase();
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (m) return m[1];
  // the hex spelling (::ffff:7f00:1), as WHATWG URL canonicalises it
  const h = /^(::ffff:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (h) {
    const hi = parseInt(h[2], 16);
    const lo = parseInt(h[3], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** The name of the local or special range `addr` is in ("loopback", "private", ...), or null for a
 * public address. Not an IP address at all: "not an IP address" (never public by mistake). */
export function localRange(addr: string): string | null {
  const bare = addr.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) {
    if (bare === '255.255.255.255') return 'broadcast';
    for (const l of LISTS) if (l.type === 'ipv4' && l.b.check(bare, 'ipv4')) return l.name;
    return null;
  }
  if (isIPv6(bare)) {
    const v4 = embeddedIPv4(bare);
    if (v4 !== null && bare !== '::' && bare !== '::1') return localRange(v4);
    for (const l of LISTS) if (l.type === 'ipv6' && l.b.check(bare, 'ipv6')) return l.name;
    return null;
  }
  return 'not an IP address';
}
