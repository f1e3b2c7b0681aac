/**
 * The request channel, server side: `request.sock` (unix datagrams, one JSON message each) and `stream.sock`
 * (u32 LE length + JSON frames) for anything over MAX_DATAGRAM. Transport only: idempotent retries (a request
 * id is handled once: a retry follows the request in flight, or gets its answer again; a retry is the same bytes
 * from the same client folder, so no run can take or poison another's answer by its id), `pending` keepalives
 * while a handler waits for a human, error replies for bad input, bounded retry when a reply hits EAGAIN.
 * What a message means is the handler's business. Bounded: stream connections per peer and in all (an idle
 * one makes room, see conn-table.ts), idle ones closed, a request frame's length checked before its body
 * is kept, partial frames' bytes bounded in all, linear deframing (codec.ts), requests in flight bounded.
 */
import { hash } from 'node:crypto';
import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import {
  CLIENT_REPLY_ROOM,
  decode,
  Deframer,
  encodeText,
  type Envelope,
  type ErrorCode,
  type ErrorReply,
  frame,
  MAX_DATAGRAM,
  PROTOCOL_VERSION,
  ProtocolError,
  type Reply,
} from '../protocol/index.js';
import { checkSocketPath, replyFolder } from '../paths/index.js';
import { ConnectionTable, type Held } from './conn-table.js';
import { RateQueues, type RateLimits } from './run-rate.js';
import { EAGAIN, ECONNREFUSED, ENOENT, unixDgram, type DgramSocket } from './dgram.js';

export interface HandlerContext {
  /** 'dgram' or 'stream': where the request came from */
  transport: 'dgram' | 'stream';
  /** the sender's bound path (datagrams): where its reply goes, and which client folder it came from */
  peer?: string;
  /** the process that opened the stream connection (its pid in the daemon's pid namespace, SO_PEERCRED: the
   * kernel's word, not the peer's); undefined for datagrams, or when the kernel could not say */
  peerPid?: number;
  /** mark the request as waiting on approvals (keepalives flow while set), or clear it with null */
  setPending(approvalIds: string[] | null): void;
  /** aborted when the requester is gone while its request waits (a keepalive found its reply socket unbound
   * or removed, or its stream connection closed): its prompts can be withdrawn at once */
  gone?: AbortSignal;
}

/** A reply its handler has already put in wire form (JSON text), e.g. from parts it encoded once and reuses. */
export class EncodedReply {
  constructor(readonly json: string) {}
}

/** What a handler returns for a notice (a message its sender does not wait on): nothing is sent back. */
export const NO_REPLY = new EncodedReply('');

export type RequestHandler = (msg: Envelope, ctx: HandlerContext) => Promise<Reply | EncodedReply>;

export interface RequestServerOptions {
  requestSock: string;
  streamSock: string;
  handle: RequestHandler;
  log: (line: string) => void;
  /** how long a reply that may not have reached its client whole stays kept for a retry (default 60 s) */
  replyCacheMs?: number;
  /** how long an answer that surely reached its client is remembered, so a retry already on its way is dropped
   * (default 10 s) */
  answeredMs?: number;
  keepaliveMs?: number;
  /** kept replies at most (the oldest are forgotten first; default 100,000) */
  maxAnswered?: number;
  /** answers that surely reached their client remembered at most (the oldest first; default MAX_DELIVERED) */
  maxDelivered?: number;
  /** a run's request rate (run-rate.ts; default DEFAULT_RATE_LIMITS) */
  rateLimits?: RateLimits;
  /** stream.sock's bounds (default DEFAULT_STREAM_LIMITS) */
  streamLimits?: Partial<StreamLimits>;
  /** the process at the other end of a stream connection, as the kernel says (SO_PEERCRED): its pid.
   * Connections are counted per process, and its requests carry it (HandlerContext.peerPid). None (or
   * undefined for a connection): all count as one peer, and none carries a pid. */
  peerOf?(c: Socket): number | undefined;
  /** the clients' folder (GatePaths.clientDir): which client folder a datagram came from, by its reply
   * socket's path (replyFolder); a retry is recognised only from the same folder (retryKey) */
  clientDir?: string;
  /** the client folder a stream peer sees (src/daemon/peer-folder.ts: '' the clients' folder itself, a run
   * id, undefined none), the stream twin of replyFolder; asked once per connection */
  folderOf?(pid: number): string | undefined;
}

/** What stream.sock allows. The defaults keep its descriptors far under the daemon's limit (20,000 or more). */
export interface StreamLimits {
  /** connections open at once, all peers together */
  maxConnections: number;
  /** connections one process holds at once */
  maxPerPeer: number;
  /** a connection with nothing in flight and no byte in or out for this long is closed */
  idleMs: number;
  /** a frame must be whole this long after its first byte came */
  frameMs: number;
  /** a request frame's largest body: refused by its length, before any of it is kept */
  maxFrame: number;
  /** bytes of partial request frames kept, all connections together */
  maxBuffered: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxConnections: 512,
  maxPerPeer: 32,
  idleMs: 10_000,
  frameMs: 30_000,
  maxFrame: 16 * 1024 * 1024,
  maxBuffered: 64 * 1024 * 1024,
};

/** A stream connection, as the connection table and the idle sweep see it. */
interface StreamConn extends Held {
  socket: Socket;
  /** the process that connected (SO_PEERCRED), when the kernel said */
  pid?: number;
  deframer: Deframer;
  /** requests of this connection being handled */
  inFlight: number;
  /** when its partial frame's first byte came (0: none) */
  frameStart: number;
  /** its bytes counted in `buffered` */
  counted: number;
  /** where its requests come from, for the retry key (retryKey): worked out at its first request */
  origin?: string;
}

interface Target {
  /** the stream connection it answers on (its requests in flight keep it from being idle) */
  conn?: StreamConn;
  /** one message, as JSON text (no larger than MAX_DATAGRAM bytes on a datagram target: see deliver); true
   * when it surely reached the client (a datagram the kernel queued on the client's own socket) */
  send(json: string): boolean;
  transport: 'dgram' | 'stream';
  /** whether the requester can still get an answer (see HandlerContext.gone) */
  alive(): boolean;
}

/** A request being handled. */
interface Entry {
  target: Target;
  pending?: string[];
  timer?: NodeJS.Timeout;
  gone: AbortController;
}

/**
 * A request answered whose reply may not have reached the client whole (a stream connection, an error in its
 * place, a datagram still being retried, one longer than CLIENT_REPLY_ROOM): its text is kept for a retry, and
 * dropped once a retry got it.
 */
interface Kept {
  expires: number;
  reply?: string;
}

/** Requests being handled at most: beyond it a new one is answered `busy` (a flood, not a load). */
const MAX_IN_FLIGHT = 100_000;
/** Kept replies remembered at most, the oldest forgotten first: a retry comes seconds after its request,
 * not 100,000 answers later. (Counting them against the in-flight bound made a sustained ~1,700 requests
 * a second, e.g. `find -exec` over many files, turn `busy` after a minute.) */
const MAX_ANSWERED = 100_000;
/**
 * Answers that surely reached their client (a datagram the kernel queued on the client's own socket, or a
 * notice, which nobody waits on) remembered at most. The client reads that answer before any retry's, so
 * only a retry already sent when the answer went out matters: it waits in the daemon's datagram queue
 * (net.unix.max_dgram_qlen: 10 by default, 512 at most on common systems) behind far fewer answers than
 * this. Remembering each for a minute, as kept replies are, held ~20,000 keys after 10,000 `gate-sh -lc`
 * calls, all promoted to the old generation: its growth was most of the daemon's RSS growth.
 */
export const MAX_DELIVERED = 16_384;
/** The request types counted against their run's rate: those that make the daemon decide or build. */
const RATED: ReadonlySet<string> = new Set(['preflight', 'exec', 'session-sandbox']);

export function errorReply(id: string, code: ErrorCode, message: string): ErrorReply {
  return { v: PROTOCOL_VERSION, id, type: 'error', code, message };
}

export class RequestServer {
  private dgram?: DgramSocket;
  private stream?: Server;
  /** by retry key (retryKey): the request's bytes and the client folder they came from, not its id alone */
  private readonly inFlight = new Map<string, Entry>();
  /** replies kept for a retry (Kept), in the order answered, so expiry order too (one TTL): swept from the
   * front; by retry key */
  private readonly done = new Map<string, Kept>();
  /** answers that surely reached their client: by retry key, when it may be forgotten; in the order answered */
  private readonly delivered = new Map<string, number>();
  private sweeper?: NodeJS.Timeout;
  private idleSweeper?: NodeJS.Timeout;
  private logBudget = { until: 0, left: 0, dropped: 0 };
  /** Datagram replies are encoded here and sent at once (unix-dgram's send copies synchronously): no Buffer
   * allocation per reply. */
  private readonly scratch = Buffer.allocUnsafe(MAX_DATAGRAM);
  readonly counters = { requests: 0, errors: 0, replyDrops: 0, refusedConnections: 0, closedConnections: 0 };
  private readonly limits: StreamLimits;
  private readonly conns: ConnectionTable<StreamConn>;
  /** bytes of partial frames kept, all stream connections together */
  private buffered = 0;
  private readonly rates: RateQueues;
  /** numbers stream connections with no client folder to say, each its own retry origin */
  private connSeq = 0;

  constructor(private readonly opts: RequestServerOptions) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...opts.streamLimits };
    this.conns = new ConnectionTable(this.limits);
    this.rates = new RateQueues(opts.rateLimits);
  }

  /** Requests delayed and dropped for their run's rate. */
  get rateCounters(): { delayed: number; dropped: number } {
    return this.rates.counters;
  }

  /** The sizes of what the server remembers (`gate status`, tables): each has a bound. */
  tables(): Record<string, number> {
    return {
      in_flight: this.inFlight.size,
      kept_replies: this.done.size,
      answered: this.delivered.size,
      rate_keys: this.rates.keys,
      stream_connections: this.conns.size,
    };
  }

  /** Stream connections open now. */
  get streamConnections(): number {
    return this.conns.size;
  }

  async start(): Promise<void> {
    const { requestSock, streamSock } = this.opts;
    checkSocketPath(requestSock);
    checkSocketPath(streamSock);
    for (const p of [requestSock, streamSock]) unlinkQuiet(p); // stale: the caller holds the session lock
    const sock = unixDgram.createSocket('unix_dgram', (buf, rinfo) => this.onDatagram(buf, rinfo.path));
    await new Promise<void>((resolve, reject) => {
      sock.once('listening', resolve);
      sock.once('error', reject);
      sock.bind(requestSock);
    });
    sock.on('error', (e: Error) => this.logLimited(`request.sock: ${e.message}`));
    chmodSync(requestSock, 0o600);
    this.dgram = sock;
    const server = createServer((c) => this.onConnection(c));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(streamSock, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // an accept that fails (EMFILE) is the server's 'error' event: logged, the server goes on (with no
    // listener it would end the daemon)
    server.on('error', (e: Error) => this.logLimited(`stream.sock: ${e.message}`));
    chmodSync(streamSock, 0o600);
    this.stream = server;
    this.sweeper = setInterval(() => this.sweep(), 5_000);
    this.sweeper.unref();
    this.idleSweeper = setInterval(() => this.sweepConnections(), Math.min(1_000, this.limits.idleMs / 2));
    this.idleSweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
    clearInterval(this.idleSweeper);
    this.rates.close();
    for (const c of [...this.conns.all()]) this.closeConn(c);
    for (const e of this.inFlight.values()) clearInterval(e.timer);
    this.inFlight.clear();
    this.done.clear();
    this.delivered.clear();
    try {
      this.dgram?.close();
    } catch {
      /* closed */
    }
    this.stream?.close();
    unlinkQuiet(this.opts.requestSock);
    unlinkQuiet(this.opts.streamSock);
  }

  private onDatagram(buf: Buffer, peer: string | undefined): void {
    let lost = false;
    const target: Target | undefined = peer
      ? { transport: 'dgram', send: (json) => this.sendDatagram(json, peer, () => (lost = true)), alive: () => !lost }
      : undefined;
    if (!peer) this.logLimited(`request.sock: datagram of ${buf.length} bytes from a sender without a bound path: no reply possible`);
    // unix-dgram reads into a 64 KiB buffer and drops MSG_TRUNC: a full buffer means the message was cut.
    if (buf.length >= 65_536) {
      this.reject(
        target,
        errorReply(readIdLoosely(buf), 'too-large', `datagram of ${buf.length}+ bytes was truncated; send messages over ${MAX_DATAGRAM} bytes on stream.sock`),
      );
      return;
    }
    this.dispatch(buf, target, peer);
  }

  private onConnection(c: Socket): void {
    c.on('error', () => c.destroy());
    let pid: number | undefined;
    try {
      pid = this.opts.peerOf?.(c);
    } catch {
      /* gone already: counted with the unnamed */
    }
    const peer = pid === undefined ? undefined : `pid ${pid}`;
    const key = peer ?? '?';
    if (!this.conns.admit(key)) {
      this.counters.refusedConnections++;
      this.logLimited(`stream.sock: connection of ${peer ?? 'an unknown peer'} refused: too many open`);
      this.sendAndClose(c, errorReply('-', 'busy', 'too many stream connections to the gate daemon; retry'));
      return;
    }
    const conn: StreamConn = {
      socket: c,
      pid,
      peer: key,
      deframer: new Deframer(this.limits.maxFrame),
      inFlight: 0,
      frameStart: 0,
      counted: 0,
      lastActive: Date.now(),
      idle: () => conn.inFlight === 0 && conn.deframer.buffered === 0,
      close: (why) => {
        this.counters.closedConnections++;
        this.sendAndClose(c, errorReply('-', 'busy', `gate daemon: ${why}`));
      },
    };
    this.conns.add(conn);
    const target: Target = {
      transport: 'stream',
      conn,
      send: (json) => {
        if (c.writable) {
          conn.lastActive = Date.now();
          c.write(frame(Buffer.from(json, 'utf8')));
        }
        return false; // a connection may die with the reply unread: keep it
      },
      alive: () => !c.destroyed && c.writable,
    };
    c.on('close', () => this.closeConn(conn));
    c.on('data', (chunk: Buffer) => {
      const now = Date.now();
      conn.lastActive = now;
      let frames: Buffer[];
      try {
        frames = conn.deframer.push(chunk);
      } catch (e) {
        this.reject(undefined, errorReply('-', 'too-large', (e as Error).message));
        this.sendAndClose(c, errorReply('-', 'too-large', (e as Error).message));
        this.closeConn(conn);
        return;
      }
      const kept = conn.deframer.buffered;
      this.buffered += kept - conn.counted;
      conn.counted = kept;
      conn.frameStart = kept === 0 ? 0 : conn.frameStart || now;
      if (this.buffered > this.limits.maxBuffered) {
        const why = `partial frames over ${this.limits.maxBuffered} bytes in all`;
        this.reject(undefined, errorReply('-', 'busy', why));
        this.sendAndClose(c, errorReply('-', 'busy', `the gate daemon holds too much of other requests (${why}); retry`));
        this.closeConn(conn);
        return;
      }
      for (const f of frames) this.dispatch(f, target, undefined);
    });
  }

  /** Forget a stream connection and what it kept (idempotent). */
  private closeConn(conn: StreamConn): void {
    this.conns.remove(conn);
    this.buffered -= conn.counted;
    conn.counted = 0;
    if (!conn.socket.destroyed) conn.socket.destroy();
  }

  /** A last error frame, then the descriptor is released at once: a peer that never reads or closes must not
   * keep it. A small frame on a Unix socket is written at once, and stays readable after the close. */
  private sendAndClose(c: Socket, err: ErrorReply): void {
    if (c.writable) c.write(frame(Buffer.from(encodeText(err as unknown as Envelope), 'utf8')));
    c.destroy();
  }

  /** Stream connections idle too long, or with a frame started too long ago, are closed. */
  private sweepConnections(): void {
    const now = Date.now();
    for (const conn of [...this.conns.all()]) {
      const stale = conn.frameStart ? now - conn.frameStart > this.limits.frameMs : conn.inFlight === 0 && now - conn.lastActive > this.limits.idleMs;
      if (!stale) continue;
      this.counters.closedConnections++;
      this.closeConn(conn);
    }
  }

  private dispatch(buf: Buffer, target: Target | undefined, peer: string | undefined): void {
    this.counters.requests++;
    let msg: Envelope;
    try {
      msg = decode(buf);
    } catch (e) {
      const pe = e instanceof ProtocolError ? e : new ProtocolError('malformed', String(e));
      this.reject(target, errorReply(pe.id ?? readIdLoosely(buf), pe.code, pe.message));
      return;
    }
    // A retry: never handle twice. Follow the request in flight, or answer from what is kept.
    const key = this.retryKey(buf, peer, target?.conn);
    const inFlight = this.inFlight.get(key);
    if (inFlight) {
      if (target) inFlight.target = target;
      if (inFlight.pending) this.sendPending(inFlight, msg.id);
      return;
    }
    if (this.delivered.has(key)) return;
    const done = this.done.get(key);
    if (done) {
      if (done.reply !== undefined && target && this.deliver(target, done.reply, msg.id)) done.reply = undefined;
      return;
    }
    if (!target) return;
    // Bounded memory under a flood of distinct valid requests: shed load, the client retries.
    if (this.inFlight.size >= MAX_IN_FLIGHT) return this.reject(target, errorReply(msg.id, 'busy', 'the gate daemon is busy; retry'));
    const entry: Entry = { target, gone: new AbortController() };
    this.inFlight.set(key, entry);
    const conn = target.conn;
    if (conn) conn.inFlight++;
    const ctx: HandlerContext = {
      transport: target.transport,
      peer,
      peerPid: conn?.pid,
      setPending: (ids) => this.setPending(entry, msg.id, ids),
      gone: entry.gone.signal,
    };
    // the requests that make the daemon work (a decision, a sandbox) count against their run's rate
    if (!RATED.has(msg.type)) return this.handleNow(msg, key, entry, ctx, conn);
    // the run it names, as sent from where it came (the reply socket's folder, or the stream peer's pid), so
    // that naming another run's id from elsewhere spends none of that run's rate
    const from = peer ? peer.slice(0, peer.lastIndexOf('/')) : `stream ${conn?.peer}`;
    const rateKey = `${typeof msg.run_id === 'string' ? msg.run_id : '-'} ${from}`;
    const start = (): void => this.handleNow(msg, key, entry, ctx, conn);
    const dropped = (): void => {
      // unanswered: the client resends by the same id, handled then as new
      this.inFlight.delete(key);
      if (conn) conn.inFlight--;
    };
    if (this.rates.admit(rateKey, start, dropped)) start();
  }

  /** Hands a request to its handler, and its answer to its client. */
  private handleNow(msg: Envelope, key: string, entry: Entry, ctx: HandlerContext, conn: StreamConn | undefined): void {
    let p: Promise<Reply | EncodedReply>;
    try {
      p = this.opts.handle(msg, ctx);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.catch((e: unknown) => {
      this.opts.log(`request ${msg.type} ${msg.id}: internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      return errorReply(msg.id, 'internal', `daemon error: ${e instanceof Error ? e.message : String(e)}; see the daemon log`);
    }).then((reply) => {
      this.setPending(entry, msg.id, null);
      this.inFlight.delete(key);
      if (conn) conn.inFlight--;
      const now = Date.now();
      const json = reply === NO_REPLY ? undefined : reply instanceof EncodedReply ? reply.json : encodeText(reply as unknown as Envelope);
      if (json === undefined || this.deliver(entry.target, json, msg.id)) {
        this.delivered.set(key, now + (this.opts.answeredMs ?? 10_000));
        if (this.delivered.size > (this.opts.maxDelivered ?? MAX_DELIVERED)) this.delivered.delete(this.delivered.keys().next().value!);
        return;
      }
      this.done.set(key, { expires: now + (this.opts.replyCacheMs ?? 60_000), reply: json });
      if (this.done.size > (this.opts.maxAnswered ?? MAX_ANSWERED)) this.done.delete(this.done.keys().next().value!);
    });
  }

  /**
   * What a retry is recognised by: the request's bytes (a client resends the very bytes it sent, by datagram
   * or over stream.sock) and the client folder they came from, the kernel's word (a datagram's bound reply
   * path, a stream peer's view: '' the clients' folder itself, outside every sandbox; a run's folder; else
   * the exact sender). By id alone, a process of one run that sent another run's request id first (ids are
   * pid, time and a counter, and a C client's reply socket is named by its id) had that request's answer
   * delivered to itself, or its own answer taken for that request, e.g. a Run for an `rm`.
   * Hashed: the kept keys stay small (thousands a second are kept for a minute).
   */
  private retryKey(buf: Buffer, peer: string | undefined, conn: StreamConn | undefined): string {
    const from = conn ? (conn.origin ??= this.streamOrigin(conn)) : this.dgramOrigin(peer);
    return `${from} ${hash('sha256', buf, 'base64')}`;
  }

  private dgramOrigin(peer: string | undefined): string {
    // (an unbound sender's address is null, whatever the type says)
    const f = peer && this.opts.clientDir !== undefined ? replyFolder({ clientDir: this.opts.clientDir }, peer) : undefined;
    return f !== undefined ? `f${f}` : `d${peer ?? ''}`;
  }

  /** A stream peer's client folder, or the connection itself when there is none to say. */
  private streamOrigin(conn: StreamConn): string {
    let f: string | undefined;
    try {
      f = conn.pid !== undefined ? this.opts.folderOf?.(conn.pid) : undefined;
    } catch {
      /* the process is gone: the connection's own */
    }
    return f !== undefined ? `f${f}` : `s${conn.pid ?? '?'}:${++this.connSeq}`;
  }

  /** Whether the reply surely reached the client (see Kept). */
  private deliver(target: Target, json: string, id: string): boolean {
    // a UTF-16 unit is at most 3 UTF-8 bytes: only a long text needs counting
    const bytes = json.length * 3 <= MAX_DATAGRAM ? 0 : Buffer.byteLength(json, 'utf8');
    if (target.transport === 'dgram' && bytes > MAX_DATAGRAM) {
      target.send(
        encodeText(
          errorReply(id, 'too-large', `reply of ${bytes} bytes is over ${MAX_DATAGRAM}; resend the same request on stream.sock`) as unknown as Envelope,
        ),
      );
      return false; // kept for the stream resend
    }
    const whole = json.length * 3 <= CLIENT_REPLY_ROOM || (bytes || Buffer.byteLength(json, 'utf8')) <= CLIENT_REPLY_ROOM;
    return target.send(json) && target.transport === 'dgram' && whole;
  }

  private setPending(entry: Entry, id: string, ids: string[] | null): void {
    clearInterval(entry.timer);
    entry.timer = undefined;
    entry.pending = ids ?? undefined;
    if (!ids) return;
    this.sendPending(entry, id);
    // often enough that a requester gone while its prompt waits is noticed at once (HandlerContext.gone)
    entry.timer = setInterval(() => this.sendPending(entry, id), this.opts.keepaliveMs ?? 250);
  }

  private sendPending(entry: Entry, id: string): void {
    if (!entry.pending) return;
    entry.target.send(encodeText({ v: PROTOCOL_VERSION, id, type: 'pending', approval_ids: entry.pending }));
    if (!entry.target.alive()) entry.gone.abort();
  }

  private reject(target: Target | undefined, err: ErrorReply): void {
    this.counters.errors++;
    this.logLimited(`request rejected (${err.code}): ${err.message}`);
    target?.send(encodeText(err as unknown as Envelope));
  }

  /** Datagram replies: EAGAIN (receiver's queue full) gets a bounded, backed-off retry. True: queued at once. */
  private sendDatagram(json: string, path: string, lost?: () => void): boolean {
    // deliver() answers an oversized reply with an error; anything else that large is dropped, never cut short
    if (json.length * 3 > MAX_DATAGRAM && Buffer.byteLength(json, 'utf8') > MAX_DATAGRAM) {
      this.counters.replyDrops++;
      this.logLimited(`reply to ${path} dropped: over ${MAX_DATAGRAM} bytes`);
      return false;
    }
    const n = this.scratch.write(json, 0, 'utf8');
    return this.sendBytes(this.scratch, n, path, 0, lost);
  }

  private sendBytes(buf: Buffer, n: number, path: string, attempt: number, lost?: () => void): boolean {
    if (!this.dgram) return false;
    let queued = false;
    this.dgram.send(buf, 0, n, path, (err) => {
      if (!err) return void (queued = true);
      if ((err.code === EAGAIN || err.message === 'congestion') && attempt < 8) {
        // the callback runs inside send(), so `buf` still holds this message: keep a copy for the retry
        const copy = Buffer.from(buf.subarray(0, n));
        setTimeout(() => this.sendBytes(copy, n, path, attempt + 1, lost), 2 ** attempt);
        return;
      }
      this.counters.replyDrops++;
      // a client gone before its answer (gate-sh sends run-finished and exits without waiting for the ack)
      // is not worth a log line per run
      if (err.code === ENOENT || err.code === ECONNREFUSED) return void lost?.();
      this.logLimited(`reply to ${path} dropped: ${err.message}`);
    });
    return queued; // unix-dgram calls back inside send()
  }

  /** Forget answered requests past their time: from the oldest on, so O(expired), not O(kept). */
  private sweep(): void {
    this.rates.sweep();
    const now = Date.now();
    for (const [id, d] of this.done) {
      if (d.expires >= now) break;
      this.done.delete(id);
    }
    for (const [id, expires] of this.delivered) {
      if (expires >= now) break;
      this.delivered.delete(id);
    }
  }

  /** Logs at most 20 lines per 10 s so a flood of garbage cannot fill the disk. */
  private logLimited(line: string): void {
    const now = Date.now();
    const b = this.logBudget;
    if (now > b.until) {
      if (b.dropped) this.opts.log(`(${b.dropped} similar log lines suppressed)`);
      b.until = now + 10_000;
      b.left = 20;
      b.dropped = 0;
    }
    if (b.left-- > 0) this.opts.log(line);
    else b.dropped++;
  }
}

function unlinkQuiet(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    /* not there */
  }
}

/** For error replies to undecodable messages: the id, if one can be seen at all. */
function readIdLoosely(buf: Buffer): string {
  const m = /"id"\s*:\s*"([^"\\]{1,128})"/.exec(buf.subarray(0, 4096).toString('utf8'));
  return m ? m[1] : '-';
}
