/**
 * HTTP/1.x message heads and body framing, as the proxy's plain-HTTP front needs them (http-front.ts): where
 * a head ends, its start line and fields (strictly: a head that two parsers could read two ways is
 * refused, never guessed at), how long the body after it is (RFC 9112 §6.3), and where a chunked body
 * ends. The proxy forwards the bytes as sent; what is parsed here only decides where one message ends and
 * the next begins, so a second request on a kept-alive connection is decided on its own.
 * Pure. Trust boundary: requests come from the sandboxed client, answers from a server it named
 * (both untrusted).
 */

/** the longest head taken (request or answer); beyond, the connection is refused */
export const MAX_HEAD = 64 * 1024;
const MAX_FIELDS = 256;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface Head {
  /** the start line, without its CRLF */
  start: string;
  /** the field lines as sent, each without its CRLF */
  fields: [name: string, value: string][];
  /** the bytes after the start line's CRLF up to and including the empty line: forwarded as they are */
  rest: Buffer;
}

export type Framing = { kind: 'none' } | { kind: 'length'; n: number } | { kind: 'chunked' } | { kind: 'close' };

/** Where the head in `buf` ends (just past its empty line), or -1 when it has not yet. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf('\r\n\r\n', 0, 'latin1');
  return i < 0 ? -1 : i + 4;
}

/** The head `buf` (exactly: up to and including its empty line), or why it is refused. */
export function parseHead(buf: Buffer): Head | string {
  const text = buf.toString('latin1', 0, buf.length - 4);
  const lines = text.split('\r\n');
  const start = lines[0];
  if (/[\r\n\0]/.test(text.replace(/\r\n/g, ''))) return 'a bare CR, LF or NUL in the head';
  if (lines.length - 1 > MAX_FIELDS) return 'too many header fields';
  const fields: [string, string][] = [];
  for (const line of lines.slice(1)) {
    // no obsolete line folding (a field line starting with whitespace): parsers disagree on it
    const m = /^([^:\s]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!m || !TOKEN.test(m[1])) return `a malformed header field line: ${JSON.stringify(line.slice(0, 80))}`;
    fields.push([m[1], m[2]]);
  }
  return { start, fields, rest: buf.subarray(Buffer.byteLength(start, 'latin1') + 2) };
}

/** every value of a field (by name, any case), comma lists split, trimmed, lower-cased */
export function tokens(fields: Head['fields'], name: string): string[] {
  const n = name.toLowerCase();
  return fields
    .filter(([k]) => k.toLowerCase() === n)
    .flatMap(([, v]) => v.split(','))
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
}

export function values(fields: Head['fields'], name: string): string[] {
  const n = name.toLowerCase();
  return fields.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);
}

/** Content-Length: null when absent, a string when unusable (several different values, not digits) */
function contentLength(fields: Head['fields']): number | null | string {
  const vs = values(fields, 'content-length').flatMap((v) => v.split(',').map((x) => x.trim()));
  if (vs.length === 0) return null;
  if (!vs.every((v) => /^\d{1,15}$/.test(v)) || new Set(vs.map(Number)).size !== 1) return `an unusable Content-Length (${vs.join(', ')})`;
  return Number(vs[0]);
}

/** A request's body (RFC 9112 §6.3): both Transfer-Encoding and Content-Length, or a coding other than
 * chunked last, is refused (request smuggling lives in the gap between two readings of those). */
export function requestFraming(fields: Head['fields']): Framing | string {
  const te = tokens(fields, 'transfer-encoding');
  const cl = contentLength(fields);
  if (te.length) {
    if (cl !== null) return 'both Transfer-Encoding and Content-Length';
    if (te[te.length - 1] !== 'chunked') return `a Transfer-Encoding that does not end in chunked (${te.join(', ')})`;
    return { kind: 'chunked' };
  }
  if (typeof cl === 'string') return cl;
  return cl ? { kind: 'length', n: cl } : { kind: 'none' };
}

/** An answer's body to a request of `method` (RFC 9112 §6.3). */
export function responseFraming(fields: Head['fields'], status: number, method: string): Framing | string {
  if (method === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304) return { kind: 'none' };
  const te = tokens(fields, 'transfer-encoding');
  const cl = contentLength(fields);
  // both: the client might read the body by the other one (an answer smuggled into the next)
  if (te.length && cl !== null) return 'both Transfer-Encoding and Content-Length';
  if (te.length) return te[te.length - 1] === 'chunked' ? { kind: 'chunked' } : { kind: 'close' };
  if (typeof cl === 'string') return cl;
  return cl === null ? { kind: 'close' } : cl === 0 ? { kind: 'none' } : { kind: 'length', n: cl };
}

/** Where a chunked body ends, fed its bytes as they come (the bytes themselves are forwarded as sent). */
export class ChunkedEnd {
  private state: 'size' | 'data' | 'data-crlf' | 'trailer' | 'done' = 'size';
  private line = '';
  private left = 0;

  get done(): boolean {
    return this.state === 'done';
  }

  /** How many of `b`'s bytes belong to the body (all, until its end); throws on a malformed body. */
  feed(b: Buffer): number {
    let i = 0;
    while (i < b.length && this.state !== 'done') {
      if (this.state === 'data') {
        const n = Math.min(this.left, b.length - i);
        this.left -= n;
        i += n;
        if (this.left === 0) this.state = 'data-crlf';
        continue;
      }
      const c = b[i++];
      if (c !== 0x0a) {
        this.line += String.fromCharCode(c);
        if (this.line.length > 4096) throw new Error('a chunk line longer than 4096 bytes');
        continue;
      }
      if (!this.line.endsWith('\r')) throw new Error('a chunk line without CR');
      const line = this.line.slice(0, -1);
      this.line = '';
      if (this.state === 'data-crlf') {
        if (line !== '') throw new Error('no CRLF after a chunk');
        this.state = 'size';
      } else if (this.state === 'size') {
        const m = /^([0-9A-Fa-f]{1,12})[ \t]*(;.*)?$/.exec(line);
        if (!m) throw new Error(`a malformed chunk size: ${JSON.stringify(line.slice(0, 40))}`);
        this.left = Number.parseInt(m[1], 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else if (line === '') this.state = 'done'; // trailer: fields until the empty line
    }
    return i;
  }
}
