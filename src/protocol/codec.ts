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
  return `{"v":${j(r.v)},"id":${j(r.id)},"type":"preflight","run_id":${j(r.run_id)},"action":${j(r.action)},"complex":${j(r.complex)},"subcommands":${subcommandsJson},"sandbox":${j(r.sandbox)}${r.start_up ? ',"start_up":true' : ''}${r.per_exec ? ',"per_exec":true' : ''}${r.sandbox_narrowed ? ',"sandbox_narrowed":true' : ''}${r.plan ? `,"plan":${j(r.plan)}` : ''}}`;
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

/** Incremental deframer for a stream socket; throws ProtocolError on an oversized frame. */
export class Deframer {
  private chunks: Buffer[] = [];
  private size = 0;

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const out: Buffer[] = [];
    let buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    while (buf.length >= 4) {
      const n = buf.readUInt32LE(0);
      if (n > MAX_STREAM_FRAME) throw new ProtocolError('too-large', `frame of ${n} bytes exceeds ${MAX_STREAM_FRAME}`);
      if (buf.length < 4 + n) break;
      out.push(buf.subarray(4, 4 + n));
      buf = buf.subarray(4 + n);
    }
    this.chunks = buf.length ? [buf] : [];
    this.size = buf.length;
    return out;
  }
}

let counter = 0;
/** Request ids: unique per process and time, so retries are idempotent and replies cannot cross. */
export function newId(): string {
  counter = (counter + 1) % 0x7fffffff;
  return `${process.pid.toString(36)}-${Date.now().toString(36)}-${counter.toString(36)}`;
}
