/**
 * One request over the datagram socket, as a small state machine: resends with back-off while nothing
 * answers, a ping every heartbeat while an approval is pending (the wait is then open-ended while the
 * daemon stays alive), and the move to the stream socket when the daemon's datagram queue stays full or
 * its answer is too large for a datagram. The first answer from either socket wins. No I/O of its own:
 * it sends through the RequestClient's socket (DatagramLink).
 */
import { CALL_TEXTS, encode, type Envelope, fill, newId, type Pending, PROTOCOL_VERSION, type Reply, REQUEST_WAITS } from '../protocol/index.js';
import type { GatePaths } from '../paths/index.js';
import type { RequestOptions } from './request-options.js';
import { died, fromErrorReply, RequestError } from './client-errors.js';
import { streamRequest } from './stream-request.js';

/** How long a datagram may wait for room in the daemon's queue before the request moves to the stream socket. */
const CONGESTION_MS = 300;

/** What a request needs of its RequestClient. */
export interface DatagramLink {
  paths: GatePaths;
  /** replies by id (a reply with our id ends the wait) */
  waiters: Map<string, (m: Envelope) => void>;
  /** send one datagram; resolves when the kernel took it, rejects with a RequestError */
  send(buf: Buffer, budgetMs: number): Promise<void>;
  /** the last reply that could not be read, for the timeout's message */
  lastError(): RequestError | undefined;
}

export class DatagramRequest<R extends Reply> {
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly heartbeatMs: number;
  private readonly silenceMs: number;
  /** every wait added up: what the stream fallback may still take, and what the timeout message says */
  private readonly budgetMs: number;
  private attempts = 0;
  /** a person is being asked: ping every heartbeat instead of resending */
  private pending = false;
  private lastLife = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly pingIds = new Set<string>();
  private finished = false;
  /** once the daemon took the request, its socket vanishing means it died meanwhile */
  private sent = false;
  private streaming = false;

  constructor(
    private readonly link: DatagramLink,
    private readonly env: Envelope,
    private readonly buf: Buffer,
    private readonly opts: RequestOptions,
    private readonly resolve: (r: R) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.retries = opts.retries ?? 2;
    this.budgetMs = Array.from({ length: this.retries + 1 }, (_, i) => this.waitFor(i)).reduce((a, b) => a + b, 0);
    this.heartbeatMs = opts.heartbeatMs ?? REQUEST_WAITS.heartbeatMs;
    this.silenceMs = opts.pendingSilenceMs ?? REQUEST_WAITS.silenceMs;
  }

  start(): void {
    this.link.waiters.set(this.env.id, (m) => this.onReply(m));
    this.send(this.buf);
    this.arm();
  }

  /** a busy daemon answers late rather than never: back off, so resends do not add to its backlog */
  private waitFor(attempt: number): number {
    return Math.max(this.timeoutMs, Math.min(this.timeoutMs * 2 ** attempt, REQUEST_WAITS.maxMs));
  }

  private done(err: RequestError | undefined, reply?: R): void {
    this.finished = true;
    clearTimeout(this.timer);
    this.link.waiters.delete(this.env.id);
    for (const p of this.pingIds) this.link.waiters.delete(p);
    if (err) this.reject(err);
    else this.resolve(reply as R);
  }

  private send(b: Buffer): void {
    void this.link.send(b, CONGESTION_MS).then(
      () => (this.sent = true),
      (e: RequestError) => {
        if (e.kind !== 'overloaded') return this.done(this.sent && e.kind === 'not-running' ? died(this.pending) : e);
        // answered meanwhile (a resend can wait for room after the first copy's answer came), or a ping
        if (this.finished || b !== this.buf || this.streaming) return;
        this.viaStream();
      },
    );
  }

  /**
   * The datagram queue stays full (many clients at once): the stream socket queues instead of refusing.
   * A resend's first copy may have been answered already, into our datagram socket (the daemon does not
   * answer an id twice): the first answer from either socket wins and closes the other.
   */
  private viaStream(): void {
    this.streaming = true;
    clearTimeout(this.timer);
    const viaStream = new AbortController();
    this.link.waiters.set(this.env.id, (m) => {
      if (m.type === 'pending') return;
      viaStream.abort();
      if (m.type === 'error') this.done(fromErrorReply(m as unknown as { code: string; message: string }));
      else this.done(undefined, m as unknown as R);
    });
    void streamRequest<R>(this.link.paths, this.env, this.buf, { ...this.opts, timeoutMs: this.budgetMs, retries: 0 }, viaStream.signal).then(
      (r) => this.done(undefined, r),
      (e: RequestError) => (viaStream.signal.aborted ? undefined : this.done(e)),
    );
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimer(), this.pending ? this.heartbeatMs : this.waitFor(this.attempts));
  }

  private onTimer(): void {
    if (this.pending) return this.heartbeat();
    if (this.attempts >= this.retries) {
      const seconds = (this.budgetMs / 1000).toFixed(1);
      const last = this.link.lastError();
      const hint = last ? ` (last error: ${last.message})` : '';
      return this.done(
        new RequestError('not-answering', fill(CALL_TEXTS.notAnswering, seconds, hint)),
      );
    }
    this.attempts++;
    this.send(this.buf);
    this.arm();
  }

  /** While pending: a ping proves the daemon alive; silence for too long ends the wait. */
  private heartbeat(): void {
    if (Date.now() - this.lastLife > this.silenceMs)
      return this.done(new RequestError('not-answering', CALL_TEXTS.silent));
    const pingId = newId();
    this.pingIds.add(pingId);
    this.link.waiters.set(pingId, () => (this.lastLife = Date.now()));
    this.send(encode({ v: PROTOCOL_VERSION, id: pingId, type: 'ping' }));
    this.arm();
  }

  private onReply(m: Envelope): void {
    this.lastLife = Date.now();
    if (m.type === 'pending') {
      this.pending = true;
      this.opts.onPending?.(m as unknown as Pending);
      return this.arm();
    }
    if (m.type === 'error') {
      const er = m as unknown as { code: string; message: string };
      if (er.code === 'busy' && this.attempts < this.retries) return this.arm(); // the timer resends
      if (er.code === 'too-large') {
        // the reply would not fit a datagram: the daemon keeps it for the same id on the stream socket
        clearTimeout(this.timer);
        this.link.waiters.delete(this.env.id);
        return void streamRequest<R>(this.link.paths, this.env, this.buf, this.opts).then(this.resolve, this.reject);
      }
      return this.done(fromErrorReply(er));
    }
    this.done(undefined, m as unknown as R);
  }
}
