/**
 * Encoding of request-channel messages. Datagrams: one UTF-8 JSON object each, ≤ MAX_DATAGRAM bytes.
 * Stream fallback: frames of u32 little-endian length + JSON. Decoding validates the envelope only
 * (v, id, type); each handler validates its own fields. No dependencies: this is on the client hot path.
 */
import { MAX_DATAGRAM, MAX_STREAM_FRAME, PROTOCOL_VERSION, type ErrorCode, type PreflightReply } from './messages.js';

export class ProtocolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly id?: string,
  ) {
    super(message);
  }
}

export interface Envelope {
  v: number;
  id: string;
  type: string;
  [k: string]: unknown;
}

export function encode(msg: Envelope): Buffer {
  return Buffer.from(encodeText(msg), 'utf8');
}

/** The JSON text of a message (what encode() turns into bytes). */
export function encodeText(msg: Envelope): string {
  return JSON.stringify(msg);
}

/**
 * A pre-flight reply's JSON text from its subcommands' JSON, encoded earlier (the daemon encodes a cached
 * script's subcommand replies once): the same text as encodeText(reply), field for field, without re-encoding them.
 */
export function encodePreflightReply(r: Omit<PreflightReply, 'subcommands'>, subcommandsJson: string): string {
  const j = JSON.stringify;
  return `{"v":${j(r.v)},"id":${j(r.id)},"type":"preflight","run_id":${j(r.run_id)},"action":${j(r.action)},"complex":${j(r.complex)},"subcommands":${subcommandsJson},"sandbox":${j(r.sandbox)}${r.start_up ? ',"start_up":true' : ''}${r.per_exec ? ',"per_exec":true' : ''}${r.sandbox_narrowed ? ',"sandbox_narrowed":true' : ''}${r.secrets ? `,"secrets":${j(r.secrets)}` : ''}${r.plan ? `,"plan":${j(r.plan)}` : ''}}`;
}

/** True when the message must take the stream fallback instead of a datagram. */
export function needsStream(buf: Buffer): boolean {
  return buf.length > MAX_DATAGRAM;
}

/** Decode and check the envelope; throws ProtocolError (with the id when one could be read). */
export function decode(buf: Buffer): Envelope {
  if (buf.length > MAX_STREAM_FRAME) throw new ProtocolError('too-large', `message of ${buf.length} bytes exceeds ${MAX_STREAM_FRAME}`);
  let obj: unknown;
  try {
    obj = JSON.parse(buf.toString('utf8'));
  } catch {
    throw new ProtocolError('malformed', 'message is not valid JSON');
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new ProtocolError('malformed', 'message is not a JSON object');
  const o = obj as Record<string, unknown>;
  const id = typeof o.id === 'string' && o.id.length > 0 && o.id.length <= 128 ? o.id : undefined;
  if (!id) throw new ProtocolError('malformed', 'message has no valid "id"');
  if (o.v !== PROTOCOL_VERSION)
    throw new ProtocolError(
      'bad-version',
      `unsupported protocol version ${JSON.stringify(o.v)} (this daemon speaks ${PROTOCOL_VERSION}); restart the daemon and gate-sh from the same install`,
      id,
    );
  if (typeof o.type !== 'string') throw new ProtocolError('malformed', 'message has no "type"', id);
  return o as Envelope;
}

/** Stream framing: length-prefix one message. */
export function frame(buf: Buffer): Buffer {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(buf.length, 0);
  return Buffer.concat([head, buf]);
}

/**
 * Incremental deframer for a stream socket. A frame's length is checked as soon as its 4-byte head is in,
 * before any of its body is kept (throws ProtocolError `too-large`), and a frame's bytes are copied once
 * when it is whole: linear in the bytes received, however small the pieces they arrive in (copying all
 * that was kept on every piece made a 40 MiB partial frame cost seconds of CPU).
 */
export class Deframer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** the body length of the frame being received, once its head is in; -1 before */
  private need = -1;

  constructor(private readonly maxFrame: number = MAX_STREAM_FRAME) {}

  /** Bytes kept for frames not yet whole. */
  get buffered(): number {
    return this.size;
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (chunk.length) this.chunks.push(chunk);
    this.size += chunk.length;
    for (;;) {
      if (this.need < 0) {
        if (this.size < 4) break;
        const n = this.take(4).readUInt32LE(0);
        if (n > this.maxFrame) throw new ProtocolError('too-large', `frame of ${n} bytes exceeds ${this.maxFrame}`);
        this.need = n;
      }
      if (this.size < this.need) break;
      out.push(this.take(this.need));
      this.need = -1;
    }
    return out;
  }

  /** The first n kept bytes (n <= size), removed: a view when one piece holds them, else one copy. */
  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (n === 0) return Buffer.alloc(0);
    this.size -= n;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const buf = Buffer.allocUnsafe(n);
    let at = 0;
    let used = 0;
    while (at < n) {
      const c = this.chunks[used];
      const k = Math.min(c.length, n - at);
      c.copy(buf, at, 0, k);
      at += k;
      if (k === c.length) used++;
      else this.chunks[used] = c.subarray(k);
    }
    this.chunks.splice(0, used);
    return buf;
  }
}

let counter = 0;
/** Request ids: unique per process and time, so retries are idempotent and replies cannot cross. */
export function newId(): string {
  counter = (counter + 1) % 0x7fffffff;
  return `${process.pid.toString(36)}-${Date.now().toString(36)}-${counter.toString(36)}`;
}
