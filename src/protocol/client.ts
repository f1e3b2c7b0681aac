/**
 * Request-channel client: what gate-sh (and the shims' reference, the MCP server) use to ask the daemon.
 * Datagrams over unix-dgram with a bound reply socket; messages over MAX_DATAGRAM take the stream socket.
 * Hot path: imports only node built-ins, the codec and unix-dgram (net is loaded only for large messages).
 *
 * Waiting rules: a reply with our id ends the wait; `pending` means a human is being asked, so the wait
 * becomes open-ended while the daemon stays alive (a ping every heartbeat; a dead daemon's socket refuses
 * at once). Without any answer the same message (same id: idempotent) is resent, a bounded number of times.
 */
import { createRequire } from 'node:module';
import { closeSync, openSync, readFileSync, readSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decode, encode, frame, needsStream, newId, Deframer, ProtocolError, type Envelope } from './codec.js';
import { PROTOCOL_VERSION, type Pending, type Reply } from './messages.js';
import { checkSocketPath, type GatePaths } from './paths.js';

/** `unreachable`: a daemon may run, but a sandbox around this process hides or forbids its sockets. */
export type RequestErrorKind = 'not-running' | 'unreachable' | 'not-answering' | 'overloaded' | 'protocol' | 'version';

/** How long a datagram may wait for room in the daemon's queue before the request moves to the stream socket. */
const CONGESTION_MS = 300;

/** Why a request failed; `message` says what happened and what to do. */
export class RequestError extends Error {
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  /** wait for an answer before the first resend (default 2000 ms); each later wait doubles, up to 4 s */
  timeoutMs?: number;
  /** resends after a timeout or a `busy` reply, same id (default 2) */
  retries?: number;
  /** while pending: liveness probe interval (default 500 ms) */
  heartbeatMs?: number;
  /** while pending: give up after this long without any sign of life (default 5000 ms) */
  pendingSilenceMs?: number;
  /** called on each `pending` message (approval in progress) */
  onPending?: (p: Pending) => void;
}

/** Messages as the client sends them: the envelope fields are filled in here. */
export type Outgoing = { type: string; id?: string; v?: number } & Record<string, unknown>;

const ERRNO: Record<number, string> = { [-1]: 'EPERM', [-2]: 'ENOENT', [-111]: 'ECONNREFUSED', [-11]: 'EAGAIN', [-13]: 'EACCES', [-30]: 'EROFS' };

/** Errors a sandbox gives for a socket it forbids (seccomp: EPERM; Landlock, modes: EACCES; read-only: EROFS). */
export const DENIED_ERRNOS = new Set([-1, -13, -30]);

/** What to do about it, said the same for every route that ends here (gate-sh, gate mcp, gate approve, hooks). */
export function unreachableMessage(why: string): string {
  return (
    `cannot reach the gate daemon from here: ${why}${seccompNote()}. ` +
    `This process seems to run inside another sandbox (the agent's own, a container, bubblewrap) that hides or forbids the daemon's socket. ` +
    `Turn the agent's own sandbox off and let gate-sh sandbox the commands (Codex: sandbox_mode = "danger-full-access"), ` +
    `or route the agent through 'gate mcp' or its hook (see 'gate setup')`
  );
}

/** " (this process runs under a seccomp filter)" when /proc says so: supporting detail, never the verdict. */
function seccompNote(): string {
  try {
    return /^Seccomp:\s*2$/m.test(readFileSync('/proc/self/status', 'utf8')) ? ' (this process runs under a seccomp filter)' : '';
  } catch {
    return '';
  }
}

function unreachable(why: string): RequestError {
  return new RequestError('unreachable', unreachableMessage(why));
}

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

function notRunning(socket: string, why: string): RequestError {
  return new RequestError('not-running', `the gate daemon is not running (${why} at ${socket}); start it with 'gate daemon start'`);
}

function died(pending: boolean): RequestError {
  const when = pending ? 'while an approval was pending' : 'before answering';
  return new RequestError('not-answering', `the gate daemon stopped ${when}; start it again with 'gate daemon start' and check 'gate log'`);
}

function fromErrorReply(r: { code: string; message: string }): RequestError {
  if (r.code === 'bad-version') return new RequestError('version', `protocol version mismatch with the gate daemon: ${r.message}`);
  return new RequestError('protocol', `the gate daemon refused the request (${r.code}): ${r.message}`);
}

function decodeReply(buf: Buffer): Envelope | RequestError {
  try {
    return decode(buf);
  } catch (e) {
    const pe = e as ProtocolError;
    return new RequestError(pe.code === 'bad-version' ? 'version' : 'protocol', `protocol error from the gate daemon: ${pe.message}`);
  }
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
    const replyPath = checkSocketPath(join(paths.clientDir, `${process.pid.toString(36)}-${urandomHex(5)}.sock`));
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
      if (err === -2) throw notRunning(paths.requestSock, `no folder ${paths.clientDir}`);
      if (DENIED_ERRNOS.has(err)) throw unreachable(`binding a reply socket in ${paths.clientDir} is refused with ${ERRNO[err]}`);
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
        if (code === -11) return reject(new RequestError('overloaded', `the gate daemon is overloaded (its queue stayed full for ${(budgetMs / 1000).toFixed(1)} s); retry, or check 'gate status'`));
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

  /** Send a request and wait for its reply (see the waiting rules above). */
  async request<R extends Reply = Reply>(msg: Outgoing, opts: RequestOptions = {}): Promise<R> {
    const env = { ...msg, v: PROTOCOL_VERSION, id: msg.id ?? newId() } as Envelope;
    const buf = encode(env);
    if (needsStream(buf)) return streamRequest<R>(this.paths, env, buf, opts);
    const timeoutMs = opts.timeoutMs ?? 2000;
    const retries = opts.retries ?? 2;
    // a busy daemon answers late rather than never: back off, so resends do not add to its backlog
    const waitFor = (attempt: number): number => Math.max(timeoutMs, Math.min(timeoutMs * 2 ** attempt, 4000));
    const budgetMs = Array.from({ length: retries + 1 }, (_, i) => waitFor(i)).reduce((a, b) => a + b, 0);
    const heartbeatMs = opts.heartbeatMs ?? 500;
    const silenceMs = opts.pendingSilenceMs ?? 5000;

    return new Promise<R>((resolve, reject) => {
      let attempts = 0;
      let pending = false;
      let lastLife = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const pingIds = new Set<string>();
      let finished = false;
      const done = (err: RequestError | undefined, reply?: R): void => {
        finished = true;
        clearTimeout(timer);
        this.waiters.delete(env.id);
        for (const p of pingIds) this.waiters.delete(p);
        if (err) reject(err);
        else resolve(reply as R);
      };
      let sent = false; // once the daemon took the request, its socket vanishing means it died meanwhile
      let streaming = false;
      const send = (b: Buffer): void =>
        void this.sendRaw(b, CONGESTION_MS).then(
          () => (sent = true),
          (e: RequestError) => {
            if (e.kind !== 'overloaded') return done(sent && e.kind === 'not-running' ? died(pending) : e);
            // answered meanwhile (a resend can wait for room after the first copy's answer came), or a ping
            if (finished || b !== buf || streaming) return;
            // the datagram queue stays full (many clients at once): the stream socket queues instead of refusing.
            // A resend's first copy may have been answered already, into our datagram socket (the daemon does
            // not answer an id twice): the first answer from either socket wins and closes the other.
            streaming = true;
            clearTimeout(timer);
            const viaStream = new AbortController();
            this.waiters.set(env.id, (m) => {
              if (m.type === 'pending') return;
              viaStream.abort();
              if (m.type === 'error') done(fromErrorReply(m as unknown as { code: string; message: string }));
              else done(undefined, m as unknown as R);
            });
            void streamRequest<R>(this.paths, env, buf, { ...opts, timeoutMs: budgetMs, retries: 0 }, viaStream.signal).then(
              (r) => done(undefined, r),
              (e: RequestError) => (viaStream.signal.aborted ? undefined : done(e)),
            );
          },
        );
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(onTimer, pending ? heartbeatMs : waitFor(attempts));
      };
      const onTimer = (): void => {
        if (pending) {
          if (Date.now() - lastLife > silenceMs)
            return done(new RequestError('not-answering', `the gate daemon stopped answering while an approval was pending; check 'gate status'`));
          const pingId = newId();
          pingIds.add(pingId);
          this.waiters.set(pingId, () => (lastLife = Date.now()));
          send(encode({ v: PROTOCOL_VERSION, id: pingId, type: 'ping' }));
          return arm();
        }
        if (attempts >= retries) {
          const seconds = (budgetMs / 1000).toFixed(1);
          const hint = this.lastError ? ` (last error: ${this.lastError.message})` : '';
          return done(new RequestError('not-answering', `the gate daemon did not answer within ${seconds} s${hint}; check 'gate status', or restart it with 'gate daemon stop; gate daemon start'`));
        }
        attempts++;
        send(buf);
        arm();
      };
      this.waiters.set(env.id, (m) => {
        lastLife = Date.now();
        if (m.type === 'pending') {
          pending = true;
          opts.onPending?.(m as unknown as Pending);
          return arm();
        }
        if (m.type === 'error') {
          const er = m as unknown as { code: string; message: string };
          if (er.code === 'busy' && attempts < retries) return arm(); // the timer resends
          if (er.code === 'too-large') {
            // the reply would not fit a datagram: the daemon keeps it for the same id on the stream socket
            clearTimeout(timer);
            this.waiters.delete(env.id);
            return void streamRequest<R>(this.paths, env, buf, opts).then(resolve, reject);
          }
          return done(fromErrorReply(er));
        }
        done(undefined, m as unknown as R);
      });
      send(buf);
      arm();
    });
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

/** Large messages: one stream connection carries the request and its replies; its close means the daemon is gone. */
async function streamRequest<R extends Reply>(paths: GatePaths, env: Envelope, buf: Buffer, opts: RequestOptions, signal?: AbortSignal): Promise<R> {
  const net = await import('node:net');
  const timeoutMs = opts.timeoutMs ?? 2000;
  if (signal?.aborted) throw new RequestError('not-answering', 'answered on the datagram socket');
  return new Promise<R>((resolve, reject) => {
    const conn = net.createConnection(checkSocketPath(paths.streamSock));
    const deframer = new Deframer();
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (err: RequestError | undefined, reply?: R): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      if (err) reject(err);
      else resolve(reply as R);
    };
    signal?.addEventListener('abort', () => done(new RequestError('not-answering', 'answered on the datagram socket')), { once: true });
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => done(new RequestError('not-answering', `the gate daemon did not answer within ${(ms / 1000).toFixed(1)} s (stream); check 'gate status'`)),
        ms,
      );
    };
    conn.on('connect', () => {
      conn.write(frame(buf));
      arm(timeoutMs * ((opts.retries ?? 2) + 1) + Math.ceil(buf.length / 65536)); // no resend on a stream: one longer wait
    });
    conn.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return done(notRunning(paths.streamSock, 'no socket'));
      if (e.code === 'ECONNREFUSED') return done(notRunning(paths.streamSock, 'stale socket'));
      if (e.code === 'EPERM' || e.code === 'EACCES' || e.code === 'EROFS') return done(unreachable(`connecting to ${paths.streamSock} is refused with ${e.code}`));
      done(new RequestError('protocol', `stream connection to the gate daemon failed: ${e.message}`));
    });
    conn.on('close', () => done(new RequestError('not-answering', `the gate daemon closed the connection before answering; check 'gate status'`)));
    conn.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = deframer.push(chunk);
      } catch (e) {
        return done(new RequestError('protocol', `protocol error from the gate daemon: ${(e as Error).message}`));
      }
      for (const f of frames) {
        const m = decodeReply(f);
        if (m instanceof RequestError) return done(m);
        if (m.id !== env.id) continue;
        if (m.type === 'pending') {
          opts.onPending?.(m as unknown as Pending);
          clearTimeout(timer); // the open connection is the liveness signal now
          continue;
        }
        if (m.type === 'error') return done(fromErrorReply(m as unknown as { code: string; message: string }));
        return done(undefined, m as unknown as R);
      }
    });
  });
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
