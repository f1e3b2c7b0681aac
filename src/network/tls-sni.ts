/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends through a tunnel,
 * so the proxy can refuse a tunnel to an allowed host whose TLS asks for another (domain fronting through
 * an allowed name). Pure: bytes in, a reading out.
 *
 * Trust boundary: the bytes are the sandboxed client's, untrusted; every length is checked against what is
 * there, and the hello is read only up to MAX_HELLO bytes. The hello may span several TLS records.
 */

/** A ClientHello larger than this is refused (real ones are a few KiB, with post-quantum key shares). */
export const MAX_HELLO = 64 * 1024;

export type HelloReading =
  /** more bytes are needed */
  | { kind: 'incomplete' }
  /** not a TLS handshake record: the first byte is not 22 */
  | { kind: 'not-tls' }
  /** a TLS handshake that cannot be read as a ClientHello (or is too large) */
  | { kind: 'malformed'; why: string }
  /** the hello's server name (lower case, no trailing dot), or null when it names none */
  | { kind: 'hello'; serverName: string | null };

/** Whether `first` begins like a TLS handshake record (type 22, version 3.x). */
export function looksLikeTls(first: Buffer): boolean {
  return first.length >= 1 && first[0] === 0x16 && (first.length < 2 || first[1] === 0x03);
}

export function readClientHello(buf: Buffer): HelloReading {
  if (buf.length === 0) return { kind: 'incomplete' };
  if (!looksLikeTls(buf)) return { kind: 'not-tls' };
  // gather the handshake bytes from consecutive handshake records
  const parts: Buffer[] = [];
  let have = 0;
  let at = 0;
  let need = -1;
  while (need < 0 || have < need) {
    if (at + 5 > buf.length) return buf.length > MAX_HELLO ? { kind: 'malformed', why: 'the ClientHello is too large' } : { kind: 'incomplete' };
    if (buf[at] !== 0x16) return { kind: 'malformed', why: 'the handshake is interleaved with other records' };
    const len = buf.readUInt16BE(at + 3);
    if (len === 0) return { kind: 'malformed', why: 'an empty handshake record' };
    if (at + 5 + len > buf.length) return at + 5 + len > MAX_HELLO ? { kind: 'malformed', why: 'the ClientHello is too large' } : { kind: 'incomplete' };
    parts.push(buf.subarray(at + 5, at + 5 + len));
    have += len;
    at += 5 + len;
    if (need < 0 && have >= 4) {
      const hs = Buffer.concat(parts);
      if (hs[0] !== 0x01) return { kind: 'malformed', why: 'the first handshake message is not a ClientHello' };
      need = 4 + hs.readUIntBE(1, 3);
      if (need > MAX_HELLO) return { kind: 'malformed', why: 'the ClientHello is too large' };
    }
  }
  return parseHello(Buffer.concat(parts).subarray(4, need));
}

function parseHello(h: Buffer): HelloReading {
  const bad = (why: string): HelloReading => ({ kind: 'malformed', why });
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > h.length) return bad('short ClientHello');
  p += 1 + h[p]; // session id
  if (p + 2 > h.length) return bad('short ClientHello');
  p += 2 + h.readUInt16BE(p); // cipher suites
  if (p + 1 > h.length) return bad('short ClientHello');
  p += 1 + h[p]; // compression methods
  if (p === h.length) return { kind: 'hello', serverName: null }; // no extensions
  if (p + 2 > h.length) return bad('short ClientHello');
  const end = p + 2 + h.readUInt16BE(p);
  if (end > h.length) return bad('extensions overrun the ClientHello');
  p += 2;
  let name: string | null = null;
  let seen = false;
  while (p + 4 <= end) {
    const type = h.readUInt16BE(p);
    const len = h.readUInt16BE(p + 2);
    const body = p + 4;
    if (body + len > end) return bad('an extension overruns the ClientHello');
    if (type === 0) {
      if (seen) return bad('two server_name extensions');
      seen = true;
      const r = serverName(h.subarray(body, body + len));
      if (typeof r !== 'string' && r !== null) return r;
      name = r;
    }
    p = body + len;
  }
  if (p !== end) return bad('extensions do not add up');
  return { kind: 'hello', serverName: name };
}

/** The host_name of a server_name extension's body (RFC 6066 §3): exactly one name, or a refusal. */
function serverName(b: Buffer): string | null | HelloReading {
  if (b.length < 2 || b.readUInt16BE(0) !== b.length - 2) return { kind: 'malformed', why: 'a malformed server_name' };
  let p = 2;
  let name: string | null = null;
  while (p + 3 <= b.length) {
    const type = b[p];
    const len = b.readUInt16BE(p + 1);
    if (p + 3 + len > b.length) return { kind: 'malformed', why: 'a malformed server_name' };
    if (type === 0) {
      if (name !== null) return { kind: 'malformed', why: 'two host names in server_name' };
      const raw = b.subarray(p + 3, p + 3 + len).toString('latin1');
      if (!/^[\x21-\x7e]+$/.test(raw)) return { kind: 'malformed', why: 'a server name with unprintable bytes' };
      name = raw.toLowerCase().replace(/\.+$/, '');
    }
    p += 3 + len;
  }
  if (p !== b.length) return { kind: 'malformed', why: 'a malformed server_name' };
  return name;
}
