/**
 * Which addresses are the machine's own or its local networks' (never wider by accident): a
 * sandboxed run that may reach `example.com` must not reach the host's loopback services, the LAN, the
 * cloud metadata service or a multicast group through a name that resolves there. Pure.
 *
 * Trust boundary: the address is the proxy's own resolution (or a literal the run sent); this only says
 * what range it is in. IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96)
 * IPv6 addresses are decided by the IPv4 address inside them.
 */
import { isIPv6 } from 'node:net';
import { addressClass, ipLiteral } from '../decide/index.js';

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

/** The name of the local or special range `addr` is in ("loopback", "private", ...: decide/network-address.ts,
 * the decider's own ranges), or null for a public address. Not an IP address at all: "not an IP address"
 * (never public by mistake). */
export function localRange(addr: string): string | null {
  const bare = ipLiteral(addr);
  if (bare === undefined) return 'not an IP address';
  const cls = addressClass(bare);
  if (cls) return cls;
  // an IPv4 address in an IPv6 spelling the ranges may not cover (::ffff:7f00:1): decided as that IPv4 address
  const v4 = isIPv6(bare) ? embeddedIPv4(bare) : null;
  return v4 !== null ? (addressClass(v4) ?? null) : null;
}
