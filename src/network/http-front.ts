/**
 * The HTTP front of the proxy: plain HTTP forwarded (absolute-form `GET http://host/path`) and HTTP
 * CONNECT tunnels. Each request on a connection is read and decided on its own: its head is parsed
 * (http-message.ts), its host:port decided and dialled (dial.ts), and a second request on a kept-alive
 * connection, to the same host or another, is decided again, on a connection of its own upstream (a grant
 * is never carried from one request to the next). A refusal is an HTTP answer: 403 (denied, or a local
 * range no rule names), 502 (the name does not resolve, the destination cannot be reached), 400 (not a
 * proxy request, or a head this proxy will not guess at), with the reason as the body and in an
 * `X-Gate-Sh-Reason` header, and the connection closed.
 *
 * Headers are not rewritten, either way: a request goes with the client's header section byte for byte,
 * only its request line in origin form (`GET /path`), as a proxy must; the answer's head goes back as the
 * server sent it. A Host header naming another host than the request line is refused (plain-HTTP
 * fronting: the server would route by the Host header). Upgrades (WebSocket over plain http) are refused;
 * `wss://` goes through CONNECT.
 *
 * Speed: an answer's body with a length, or one that ends with the connection, is carried by the daemon's
 * relay thread (relay.ts, `relayAnswer`: splice(2), no JavaScript per chunk) while Node keeps reading the
 * client for its next request; a chunked answer, a request's body and everything without the native relay
 * are carried here, with their framing followed to find where each message ends.
 * Not pure: sockets. Trust boundary: the request comes from the sandboxed client (untrusted), the answer
 * from the server it named (untrusted).
 */
import type { Socket } from 'node:net';
import { canonicalHost, deniedLine, dial, type DialContext, type Dialed, type Refusal } from './dial.js';
import { ChunkedEnd, type Framing, headEnd, MAX_HEAD, parseHead, requestFraming, responseFraming, tokens, values } from './http-message.js';
import { closeRelayed, relayAnswer } from './relay.js';
import { runTunnel } from './tunnel.js';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway' };
/** a kept-alive client connection with no new request for this long is closed (Node's http server: 5 s) */
const IDLE_MS = 30_000;
/** the first request's head must be whole within this (Node's http server: headersTimeout 60 s) */
const HEAD_MS = 60_000;
/** what a reader buffers before it stops reading its socket (backpressure) */
const HIGH_WATER = 256 * 1024;

/** The reason as a header value: printable ASCII only. */
function headerSafe(reason: string): string {
  return reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 1000);
}

function refusal(status: number, reason: string): string {
  const text = `gate-sh: network: ${reason}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `X-Gate-Sh-Reason: ${headerSafe(reason)}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`
  );
}

/** A socket's bytes as they come, buffered here (and the socket paused past HIGH_WATER). */
class Reader {
  buf: Buffer = Buffer.alloc(0);
  ended = false;
  private wake: (() => void) | null = null;
  private readonly onData = (d: Buffer): void => {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    if (this.buf.length >= HIGH_WATER) this.s.pause();
    this.poke();
  };
  private readonly onEnd = (): void => {
    this.ended = true;
    this.poke();
  };

  constructor(readonly s: Socket) {
    s.on('data', this.onData);
    s.once('end', this.onEnd);
    s.once('close', this.onEnd);
  }

  private poke(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Until more bytes came ('data'), the socket ended or the reader was detached ('end'), or `ms` passed. */
  more(ms = 0): Promise<'data' | 'end' | 'idle'> {
    if (this.ended) return Promise.resolve('end');
    this.s.resume();
    const had = this.buf.length;
    return new Promise((resolve) => {
      const timer = ms ? setTimeout(() => ((this.wake = null), resolve('idle')), ms) : undefined;
      this.wake = () => (clearTimeout(timer), resolve(this.buf.length > had ? 'data' : 'end'));
    });
  }

  take(n: number): Buffer {
    const b = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return b;
  }

  /** Stop listening: the socket is paused, what was buffered stays in `buf`. */
  detach(): void {
    this.s.pause();
    this.s.off('data', this.onData);
    this.poke();
  }

  /** The next head whole (start line to empty line), or why there is none: 'end' (the socket ended
   *  cleanly between messages), 'idle', 'too-long'. */
  async head(idleMs: number): Promise<Buffer | 'end' | 'idle' | 'too-long'> {
    for (;;) {
      const end = headEnd(this.buf);
      if (end > 0) return end > MAX_HEAD ? 'too-long' : this.take(end);
      if (this.buf.length > MAX_HEAD) return 'too-long';
      const r = await this.more(idleMs);
      if (r !== 'data') return r;
    }
  }
}

/** Write, and wait while the socket has too much to write (false: it is gone). */
async function put(s: Socket, b: Buffer): Promise<boolean> {
  if (s.destroyed) return false;
  if (s.write(b)) return true;
  await new Promise<void>((r) => (s.once('drain', r), s.once('close', r)));
  return !s.destroyed;
}

/** Carry one body from `from` to `to`, as its framing says (JavaScript: the relay-less path, chunked
 *  bodies, requests' bodies). Resolves true when the body ended where its framing says. */
async function carry(from: Reader, to: Socket, framing: Framing): Promise<boolean> {
  if (framing.kind === 'none') return true;
  let left = framing.kind === 'length' ? framing.n : Number.POSITIVE_INFINITY;
  const chunks = framing.kind === 'chunked' ? new ChunkedEnd() : null;
  for (;;) {
    if (from.buf.length) {
      let n: number;
      try {
        n = chunks ? chunks.feed(from.buf) : Math.min(left, from.buf.length);
      } catch {
        return false;
      }
      left -= n;
      if (!(await put(to, from.take(n)))) return false;
      if (left === 0 || chunks?.done) return true;
    }
    if ((await from.more()) !== 'data') {
      // an answer that ends with its connection has ended now; anything else ended early
      return framing.kind === 'close' && from.ended;
    }
  }
}

/** After the last answer: end the client's side cleanly (what was written goes first), then let go. */
function closeClient(s: Socket): void {
  if (s.destroyed) return;
  s.end();
  if (s.readableEnded) return void s.once('finish', () => s.destroy());
  // what the client still sends is dropped; its end of file (or ten seconds) closes the connection
  const t = setTimeout(() => s.destroy(), 10_000);
  s.once('close', () => clearTimeout(t));
  s.on('data', () => {});
  s.once('end', () => s.destroy());
  s.resume();
}

/**
 * Serve one client connection of the run's proxy: requests one after the other until one of them or its
 * answer says the connection ends, or a CONNECT turns it into a tunnel.
 */
export async function serveHttp(client: Socket, ctx: DialContext): Promise<void> {
  const reader = new Reader(client);
  const refuse = (status: number, reason: string): void => {
    reader.detach();
    if (client.destroyed) return;
    client.write(refusal(status, reason));
    closeClient(client);
  };
  for (let first = true; ; first = false) {
    const got = await reader.head(first ? HEAD_MS : IDLE_MS);
    if (got === 'too-long') return refuse(431, `a request head longer than ${MAX_HEAD} bytes`);
    if (got === 'end' || got === 'idle') {
      if (!client.destroyed) closeClient(client);
      return;
    }
    const head = parseHead(got);
    if (typeof head === 'string') return refuse(400, head);
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.([01])$/.exec(head.start);
    if (!m) return refuse(400, `not an HTTP/1.x request line: ${JSON.stringify(head.start.slice(0, 80))}`);
    const [, method, target, minor] = m;
    if (method === 'CONNECT') {
      reader.detach();
      const rest = reader.buf;
      reader.buf = Buffer.alloc(0);
      await tunnel(target, client, rest, ctx);
      return;
    }
    const keep = await forward(reader, client, ctx, head, method, target, minor === '1', refuse);
    if (!keep) return;
  }
}

/** One plain request and its answer; true when the connection goes on to the next request. */
async function forward(
  reader: Reader,
  client: Socket,
  ctx: DialContext,
  head: Exclude<ReturnType<typeof parseHead>, string>,
  method: string,
  target: string,
  http11: boolean,
  refuse: (status: number, reason: string) => void,
): Promise<boolean> {
  // an authority of RFC 3986's characters only (no `\` or `@`: URL parsers read those two ways), a
  // target of visible ASCII
  const t = /^http:\/\/([A-Za-z0-9._~%!$&'()*+,;=:[\]-]*)((?:[/?][^#]*)?)$/i.exec(target);
  if (!t || !/^[\x21-\x7e]+$/.test(target)) {
    refuse(400, /^https:/i.test(target) ? 'https:// goes through CONNECT, not as a plain request' : 'the proxy takes absolute-form http:// requests only');
    return false;
  }
  let url: URL;
  try {
    url = new URL(`http://${t[1]}/`);
  } catch {
    refuse(400, `not a host: ${JSON.stringify(t[1].slice(0, 80))}`);
    return false;
  }
  if (!url.hostname || url.username || url.password) {
    refuse(400, 'the proxy takes http://host[:port]/path requests only');
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : 80;
  const path = t[2].startsWith('/') ? t[2] : `/${t[2]}`;
  const hosts = values(head.fields, 'host');
  if (hosts.length > 1) {
    refuse(400, 'more than one Host header');
    return false;
  }
  // the Host header must name the request line's host (a server routes by it: plain-HTTP fronting)
  if (hosts.length === 1 && !sameAuthority(hosts[0], host, port)) {
    const why = `the Host header names ${hosts[0]}, not the requested ${url.host} (no fronting)`;
    await ctx.notify(deniedLine(canonicalHost(host) ?? host, port, why));
    refuse(403, why);
    return false;
  }
  const bodyUp = requestFraming(head.fields);
  if (typeof bodyUp === 'string') {
    refuse(400, bodyUp);
    return false;
  }
  const up = await dial(host, port, 'http', ctx);
  if (!up.ok) {
    refuse(up.status, up.reason);
    return false;
  }
  const dest = up.socket;
  const destReader = new Reader(dest);
  dest.on('error', () => {});
  const gone = (): void => void dest.destroy();
  client.once('close', gone);
  let error: string | undefined;
  try {
    dest.write(Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.${http11 ? 1 : 0}\r\n`, 'latin1'), head.rest]));
    // the request's body goes while the answer is awaited (a server may answer early, or send 100 first)
    let bodySent = false;
    const sending = carry(reader, dest, bodyUp).then((ok) => {
      bodySent = ok;
      if (!ok) error = 'the request body ended early';
      return ok;
    });
    let answer: Exclude<ReturnType<typeof parseHead>, string>;
    let bodyDown: Framing;
    let status: number;
    let version: string;
    for (;;) {
      const got = await destReader.head(0);
      if (typeof got === 'string') {
        error = got === 'too-long' ? `an answer head longer than ${MAX_HEAD} bytes` : 'the server closed before answering';
        refuse(502, `${host}:${port}: ${error}`);
        return false;
      }
      const a = parseHead(got);
      const s = typeof a === 'string' ? null : /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(a.start);
      if (typeof a === 'string' || !s) {
        error = `an unreadable answer (${typeof a === 'string' ? a : 'its status line'})`;
        refuse(502, `${host}:${port}: ${error}`);
        return false;
      }
      status = Number(s[2]);
      if (status === 101) {
        // the bytes after it would be another protocol, unread: refused as a tunnel never decided as one
        error = 'upgrades (WebSocket over plain http) are not forwarded; wss:// goes through CONNECT';
        await ctx.notify(deniedLine(canonicalHost(host) ?? host, port, error));
        refuse(403, error);
        return false;
      }
      const framing = responseFraming(a.fields, status, method);
      if (typeof framing === 'string') {
        error = `an unreadable answer (${framing})`;
        refuse(502, `${host}:${port}: ${error}`);
        return false;
      }
      if (!(await put(client, got))) return false;
      if (status >= 200) {
        answer = a;
        version = s[1];
        bodyDown = framing;
        break;
      }
      // 1xx (100 Continue, 103 Early Hints): forwarded, and the real answer follows
    }
    const closes = [...tokens(head.fields, 'connection'), ...tokens(answer.fields, 'connection')].includes('close');
    let keep = http11 && version === '1' && !closes && bodyDown.kind !== 'close';
    let done: boolean;
    const relayed = bodySent || bodyUp.kind === 'none' ? await toRelay(client, destReader, bodyDown, up, ctx) : null;
    if (relayed === null) {
      done = await carry(destReader, client, bodyDown);
      if (!done) error ??= 'the answer ended early';
    } else {
      done = relayed.ok;
      if (!relayed.ok) error = relayed.error;
    }
    if (!done) {
      client.destroy();
      return false;
    }
    keep = keep && (await sending) && !client.destroyed;
    if (!keep) {
      reader.detach();
      closeClient(client);
    }
    return keep;
  } finally {
    client.off('close', gone);
    dest.destroy();
    up.done(error);
  }
}

/** The answer's body by the relay (null: there is none, or the body is chunked: carry() does it). */
async function toRelay(client: Socket, from: Reader, framing: Framing, up: Dialed, ctx: DialContext): Promise<{ ok: boolean; error?: string } | null> {
  if (framing.kind !== 'length' && framing.kind !== 'close') return null;
  from.detach();
  const head = from.take(from.buf.length);
  const h = await relayAnswer(client, from.s, head, framing.kind === 'length' ? framing.n : null);
  if (h === null) {
    from.buf = head;
    from.s.on('data', (d: Buffer) => (from.buf = Buffer.concat([from.buf, d])));
    return null;
  }
  if (ctx.signal.aborted) closeRelayed(h.id);
  const onAbort = (): void => void closeRelayed(h.id);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  ctx.relayed?.(h.id, h.finished);
  const r = await h.finished;
  ctx.signal.removeEventListener('abort', onAbort);
  up.done(r.error ? `relay: ${r.error}` : undefined, { up: 0, down: r.down - h.headDown });
  // an answer that ends with its connection: the relay shut the client's side when it did
  return r.error ? { ok: false, error: `relay: ${r.error}` } : { ok: true };
}

/** `host:port` of a Host header against the request's (default port 80 for plain http). */
function sameAuthority(header: string, host: string, port: number): boolean {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.trim());
  if (!m) return false;
  const h = canonicalHost(m[1].replace(/^\[|\]$/g, ''));
  return h !== null && h === canonicalHost(host) && (m[2] ? Number(m[2]) : 80) === port;
}

async function tunnel(target: string, socket: Socket, head: Buffer, ctx: DialContext): Promise<void> {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
  const refuse = (r: Pick<Refusal, 'status' | 'reason'>): void => void socket.end(refusal(r.status, r.reason));
  if (!m) return refuse({ status: 400, reason: `CONNECT needs host:port, not ${JSON.stringify(target)}` });
  const host = m[1].replace(/^\[|\]$/g, '');
  const port = Number(m[2]);
  const up = await dial(host, port, 'https', ctx);
  if (!up.ok) return refuse(up);
  if (socket.destroyed) {
    up.done('the client went away');
    up.socket.destroy();
    return;
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  const refused = (why: string) => ctx.notify(deniedLine(host, port, why));
  runTunnel(socket, up, { host: canonicalHost(host) ?? host, refused, relayed: ctx.relayed, pipes: ctx.bridgePipes?.() }, head);
  socket.resume();
}
