/**
 * Request-channel client: what gate-sh (and the shims' reference, the MCP server) use to ask the daemon.
 * Datagrams over unix-dgram with a bound reply socket; messages over MAX_DATAGRAM take the stream socket.
 * Hot path: imports only node built-ins, the codec and unix-dgram (net is loaded only for large messages).
 * One request's waiting is datagram-request.ts; the stream fallback stream-request.ts; errors
 * client-errors.ts.
 *
 * Waiting rules: a reply with our id ends the wait; `pending` means a human is being asked, so the wait
 * becomes open-ended while the daemon stays alive (a ping every heartbeat; a dead daemon's socket refuses
 * at once). Without any answer the same message (same id: idempotent) is resent, a bounded number of times.
 */
import { createRequire } from 'node:module';
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { encode, type Envelope, needsStream, newId, PROTOCOL_VERSION, type Reply } from '../protocol/index.js';
import { checkSocketPath, type GatePaths, ownClientDir } from '../paths/index.js';
import { decodeReply, DENIED_ERRNOS, ERRNO, notRunning, RequestError, unreachable } from './client-errors.js';
import { streamRequest } from './stream-request.js';
import { DatagramRequest, type DatagramLink } from './datagram-request.js';
import type { RequestOptions } from './request-options.js';

export type { RequestOptions } from './request-options.js';

// the errors are the client's API too
export { DENIED_ERRNOS, RequestError, unreachableMessage, type RequestErrorKind } from './client-errors.js';

/** Messages as the client sends them: the envelope fields are filled in here. */
export type Outgoing = { type: string; id?: string; v?: number } & Record<string, unknown>;

/**
 * unix-dgram's native binding, loaded directly: its JS wrapper pulls in `bindings` (a path search), `dgram`
 * and `util`, a measurable part of gate-sh's start-up. Calls return 0 or a negative errno; sends complete
 * synchronously.
 */
interface NativeDgram {
  AF_UNIX: number;
  SOCK_DGRAM: number;
  socket(domain: number, type: number, proto: number, onRecv: (status: number, buf: Buffer | null) => void, onWritable: () => void): number;
  bind(fd: number, path: string): number;
  sendto(fd: number, buf: Buffer, off: number, len: number, path: string): number;
  connect(fd: number, path: string): number;
  /** connected send: 0 sent, 1 the peer's queue is full (the writable callback fires when it drains), <0 errno */
  send(fd: number, buf: Buffer): number;
  close(fd: number): number;
}

/** n random bytes as hex, from the kernel: node:crypto costs gate-sh's start-up ~3-5 ms just to load. */
function urandomHex(n: number): string {
  const buf = Buffer.alloc(n);
  const fd = openSync('/dev/urandom', 'r');
  try {
    if (readSync(fd, buf, 0, n, null) !== n) throw new RequestError('not-running', 'cannot read /dev/urandom for a reply socket name');
  } finally {
    closeSync(fd);
  }
  return buf.toString('hex');
}

let native: NativeDgram | undefined; // a cache of a loaded library, not configuration
function loadNative(): NativeDgram {
  if (native) return native;
  const req = createRequire(import.meta.url);
  const root = dirname(req.resolve('unix-dgram/package.json'));
  try {
    native = req(join(root, 'build', 'Release', 'unix_dgram.node')) as NativeDgram;
  } catch {
    native = req('bindings')({ bindings: 'unix_dgram.node', module_root: root }) as NativeDgram;
  }
  return native;
}

/** One bound reply socket; reuse it for several requests (e.g. preflight, then run-finished). */
export class RequestClient {
  private readonly native = loadNative();
  private readonly fd: number;
  private readonly waiters = new Map<string, (m: Envelope) => void>();
  private closed = false;
  private lastError: RequestError | undefined;
  /** senders waiting for the daemon's queue to drain */
  private readonly writable: (() => void)[] = [];

  private constructor(
    readonly paths: GatePaths,
    readonly replyPath: string,
  ) {
    const n = this.native;
    const fd = n.socket(
      n.AF_UNIX,
      n.SOCK_DGRAM,
      0,
      (status, buf) => this.onDatagram(status, buf),
      () => this.writable.splice(0).forEach((f) => f()),
    );
    if (fd < 0) {
      // Codex's proxy-routed sandbox forbids AF_UNIX sockets altogether
      if (DENIED_ERRNOS.has(fd)) throw unreachable(`creating a unix socket is refused with ${ERRNO[fd]}`);
      throw new RequestError('protocol', `cannot create a datagram socket (${ERRNO[fd] ?? fd})`);
    }
    this.fd = fd;
  }

  private onDatagram(status: number, buf: Buffer | null): void {
    if (status < 0 || !buf) return;
    const m = decodeReply(buf);
    if (m instanceof RequestError) {
      this.lastError = m; // an id we cannot read: surface it to whoever times out
      return;
    }
    this.waiters.get(m.id)?.(m);
  }

  /** Bind a 0600 reply socket in the daemon's client folder (pid and random bytes: pids repeat across sandboxes). */
  static open(paths: GatePaths): RequestClient {
    // inside a gated run, its run's client folder: the only one its sandbox can write
    const dir = ownClientDir(paths);
    const replyPath = checkSocketPath(join(dir, `${process.pid.toString(36)}-${urandomHex(5)}.sock`));
    const c = new RequestClient(paths, replyPath);
    const old = process.umask(0o177);
    let err: number;
    try {
      err = c.native.bind(c.fd, replyPath);
    } finally {
      process.umask(old);
    }
    if (err < 0) {
      c.close();
      if (err === -2) throw notRunning(paths.requestSock, `no folder ${dir}`);
      if (DENIED_ERRNOS.has(err)) throw unreachable(`binding a reply socket in ${dir} is refused with ${ERRNO[err]}`);
      throw new RequestError('not-running', `cannot bind a reply socket at ${replyPath} (${ERRNO[err] ?? err}); check 'gate status'`);
    }
    // Connected, so a full daemon queue wakes us when it drains (the kernel only does that for connected
    // senders) and only the daemon's socket can send us replies.
    err = c.native.connect(c.fd, checkSocketPath(paths.requestSock));
    if (err < 0) {
      c.close();
      if (DENIED_ERRNOS.has(err)) throw unreachable(`connecting to ${paths.requestSock} is refused with ${ERRNO[err]}`);
      throw notRunning(paths.requestSock, err === -111 ? 'stale socket' : err === -2 ? 'no socket' : `connect: ${ERRNO[err] ?? err}`);
    }
    return c;
  }

  /** 0 sent, -11 the daemon's queue is full, else a negative errno */
  private sendOnce(buf: Buffer): number {
    if (this.closed) return -9;
    const r = this.native.send(this.fd, buf);
    return r === 1 ? -11 : r;
  }

  /**
   * Send one datagram; resolves when the kernel took it. A full daemon queue (EAGAIN: max_dgram_qlen is
   * small) is retried when the socket reports writable (or after a short timer, whichever comes first)
   * until `budgetMs` is spent.
   */
  private sendRaw(buf: Buffer, budgetMs = 1000): Promise<void> {
    const deadline = Date.now() + budgetMs;
    return new Promise((resolve, reject) => {
      let delay = 2;
      const attempt = (): void => {
        if (this.closed) return reject(new RequestError('protocol', 'request client closed'));
        const code = this.sendOnce(buf);
        if (code === 0) return resolve();
        if (code === -11 && Date.now() < deadline) {
          let fired = false;
          const again = (): void => {
            if (fired) return;
            fired = true;
            clearTimeout(t);
            attempt();
          };
          const t = setTimeout(again, delay);
          delay = Math.min(delay * 2, 100);
          this.writable.push(again);
          return;
        }
        if (code === -2) return reject(notRunning(this.paths.requestSock, 'no socket'));
        if (code === -111) return reject(notRunning(this.paths.requestSock, 'stale socket'));
        if (DENIED_ERRNOS.has(code)) return reject(unreachable(`sending to ${this.paths.requestSock} is refused with ${ERRNO[code]}`));
        if (code === -11)
          return reject(
            new RequestError(
              'overloaded',
              `the gate daemon is overloaded (its queue stayed full for ${(budgetMs / 1000).toFixed(1)} s); retry, or check 'gate status'`,
            ),
          );
        reject(new RequestError('protocol', `send to ${this.paths.requestSock} failed (${ERRNO[code] ?? code})`));
      };
      attempt();
    });
  }

  /** Fire and forget (audit messages): one send attempt, never throws, never waits for a reply. */
  notify(msg: Outgoing): boolean {
    const buf = encode({ ...msg, v: PROTOCOL_VERSION, id: msg.id ?? newId() } as Envelope);
    if (this.closed || needsStream(buf)) return false;
    return this.sendOnce(buf) === 0;
  }

  /** Send a request and wait for its reply (see the waiting rules above; datagram-request.ts). */
  async request<R extends Reply = Reply>(msg: Outgoing, opts: RequestOptions = {}): Promise<R> {
    const env = { ...msg, v: PROTOCOL_VERSION, id: msg.id ?? newId() } as Envelope;
    const buf = encode(env);
    if (needsStream(buf)) return streamRequest<R>(this.paths, env, buf, opts);
    const link: DatagramLink = { paths: this.paths, waiters: this.waiters, send: (b, ms) => this.sendRaw(b, ms), lastError: () => this.lastError };
    return new Promise<R>((resolve, reject) => new DatagramRequest<R>(link, env, buf, opts, resolve, reject).start());
  }

  /** Close and remove the reply socket. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.native.close(this.fd);
    try {
      unlinkSync(this.replyPath);
    } catch {
      // gone already
    }
  }
}

/** One-shot request: bind, ask, close. */
export async function request<R extends Reply = Reply>(paths: GatePaths, msg: Outgoing, opts: RequestOptions = {}): Promise<R> {
  const c = RequestClient.open(paths);
  try {
    return await c.request<R>(msg, opts);
  } finally {
    c.close();
  }
}
