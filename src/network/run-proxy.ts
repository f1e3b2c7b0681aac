/**
 * The proxy of one run: a Unix socket in a folder only that run's sandbox sees (bound into it; the
 * bridge inside, shims/gate-netbridge.c, relays 127.0.0.1:<port> to it), and — once the bridge handed over
 * its listening socket (listener-handoff.ts) — that listener itself, in the sandbox's network namespace,
 * whose connections come here with no bridge between. Each connection is told apart by
 * its first byte: 5 is SOCKS5 (socks5.ts), NOTICE_HELLO is the bridge asking for the run's denial lines
 * (which it writes to the run's stderr), anything else is HTTP (http-front.ts).
 * Not pure: a listening socket. Trust boundary: everything arriving on the socket is the sandboxed run's
 * (untrusted); the run id is the one this socket was made for, never a value a client sends.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { MAX_SOCKET_PATH } from '../paths/index.js';
import type { DialContext } from './dial.js';
import { serveHttp } from './http-front.js';
import { ListenerHandoff } from './listener-handoff.js';
import { closeRelayed } from './relay.js';
import type { Resolver } from './resolve.js';
import { serveSocks5 } from './socks5.js';
import type { NetworkDecider } from './types.js';

/** The bridge's first bytes on its notice connection (NUL first: neither HTTP nor SOCKS5). */
export const NOTICE_HELLO = '\0gate-netbridge notices\n';
/** What a bridge that takes a tunnel's bytes through pipes sends after NOTICE_HELLO (an older daemon
 * reads it as the rest of the hello's connection and drops it). */
export const PIPES_LINE = 'pipes\n';
/** What a bridge that acknowledges each denial line says after NOTICE_HELLO: it answers every line with
 * ACK once the line is on the run's stderr, and the client's refusal waits for that (the line comes before
 * anything the command writes about the refusal, whether or not the connection passes the bridge). */
export const ACKS_LINE = 'acks\n';
const ACK = 0x41; // 'A' (no capability line starts with it)
/** how long a refusal waits for the bridge's acknowledgement (a bridge the run killed, a stderr nobody
 *  reads): then it goes anyway */
const ACK_TIMEOUT_MS = 2000;
/** connections of one run at once (beyond: refused at accept; the run's own bound) */
export const MAX_CONNECTIONS = 1024;
/** listeners handed over by one run's sandboxes (its own, its escalated commands'), at most */
export const MAX_LISTENERS = 16;
/** a notice connection that does not read is not written more than this */
const MAX_NOTICE_BACKLOG = 64 * 1024;
const SNIFF_TIMEOUT_MS = 30_000;

export interface RunProxyOptions {
  runId: string;
  socketPath: string;
  decider: NetworkDecider;
  resolve: Resolver;
  /** where the run's bridge hands over its listener (listener-handoff.ts); none: the bridge relays */
  listenerPath?: string;
  log?(line: string): void;
}

export class RunProxy {
  private readonly server: Server;
  /** the bridges' listeners taken over (one per sandbox of the run: its own, an escalated command's) */
  private readonly listeners = new Set<Server>();
  private handoff?: ListenerHandoff;
  private readonly conns = new Set<Socket>();
  /** the bridges' notice connections, each with the acknowledgements it owes (when it gives them) */
  private readonly notices = new Map<Socket, { acks: boolean; owed: (() => void)[] }>();
  /** tunnels handed to the native relay (relay.ts), by its id */
  private readonly relays = new Set<number>();
  private closed = false;
  /** the bridge said on its notice connection that it takes pipes (PIPES_LINE) */
  private bridgePipes = false;
  /** denial lines said before the bridge's notice connection came (kept few) */
  private readonly early: string[] = [];

  constructor(private readonly o: RunProxyOptions) {
    this.server = createServer({ allowHalfOpen: true, pauseOnConnect: false }, (s) => this.accept(s));
    this.server.maxConnections = MAX_CONNECTIONS;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.o.socketPath, () => {
        this.server.off('error', reject);
        // the folder is the boundary (only this run's sandbox binds it); the socket is the owner's too
        chmodSync(this.o.socketPath, 0o600);
        resolve();
      });
    });
    // the default since a denial's line waits for the bridge's acknowledgement (notify): before that, handed
    // over, a run's denial lines could reach stderr after the command's own words about the refusal.
    // GATE_NET_HANDOFF=off in the daemon's environment keeps every connection through the bridge
    if (!this.o.listenerPath || process.env.GATE_NET_HANDOFF === 'off') return;
    const h = new ListenerHandoff(this.o.listenerPath, (fd) => this.adopt(fd), (l) => this.o.log?.(l));
    // without the native addon no descriptor can be received: the bridge relays every connection itself
    if (!h.available || Buffer.byteLength(this.o.listenerPath) > MAX_SOCKET_PATH) return;
    try {
      await h.listen();
      this.handoff = h;
    } catch (e) {
      // the bridge finds no listen.sock and relays: slower, never without a route
      this.o.log?.(`network proxy of run ${this.o.runId}: no listener hand-over: ${(e as Error).message}`);
    }
  }

  /** Accept the sandbox's connections on a listener its bridge handed over (checked: listener-handoff.ts). */
  private adopt(fd: number): boolean {
    // one per sandbox of the run; a process of the run handing over more gets no more descriptors held
    if (this.closed || this.listeners.size >= MAX_LISTENERS) return false;
    const l = createServer({ allowHalfOpen: true, noDelay: true }, (s) => this.accept(s, false));
    l.on('error', (e) => {
      this.o.log?.(`network proxy of run ${this.o.runId}: a handed-over listener failed: ${e.message}`);
      l.close();
      this.listeners.delete(l);
    });
    l.listen({ fd });
    this.listeners.add(l);
    return true;
  }

  /** open connections: in Node, and tunnels carried by the native relay */
  get connections(): number {
    return this.conns.size + this.relays.size;
  }

  /** Stop listening and end every connection (the run finished: its grants end with it). */
  close(): Promise<void> {
    this.closed = true;
    for (const s of this.conns) s.destroy();
    for (const id of this.relays) closeRelayed(id);
    for (const l of this.listeners) l.close();
    void this.handoff?.close();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** `viaBridge`: the connection came on the Unix socket from the run's bridge (which may take pipes); else
   * the client itself connected on a handed-over listener */
  private context(signal: AbortSignal, viaBridge = true): DialContext {
    return {
      runId: this.o.runId,
      decider: this.o.decider,
      resolve: this.o.resolve,
      notify: (l) => this.notify(l),
      signal,
      bridgePipes: () => viaBridge && this.bridgePipes,
      relayed: (id, finished) => {
        if (this.closed) return closeRelayed(id);
        this.relays.add(id);
        void finished.then(() => this.relays.delete(id));
      },
    };
  }

  private notify(line: string): Promise<void> {
    const text = `${line}\n`;
    if (this.notices.size === 0) {
      if (this.early.length < 32) this.early.push(text);
      return Promise.resolve();
    }
    const waits: Promise<void>[] = [];
    for (const [n, st] of this.notices) {
      if (n.writableLength >= MAX_NOTICE_BACKLOG) continue;
      n.write(text);
      if (st.acks) waits.push(new Promise<void>((r) => st.owed.push(r)));
    }
    if (waits.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ACK_TIMEOUT_MS);
      void Promise.all(waits).then(() => (clearTimeout(t), resolve()));
    });
  }

  private accept(s: Socket, viaBridge = true): void {
    // the run's bound, the bridge's connections and the listeners' together
    if (this.conns.size >= MAX_CONNECTIONS) return void s.destroy();
    this.conns.add(s);
    s.once('close', () => {
      this.conns.delete(s);
      // a bridge gone owes nothing more
      for (const r of this.notices.get(s)?.owed.splice(0) ?? []) r();
      this.notices.delete(s);
    });
    s.on('error', () => s.destroy());
    const timer = setTimeout(() => s.destroy(), SNIFF_TIMEOUT_MS);
    let first = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      first = Buffer.concat([first, d]);
      // the notice hello is read whole before it is told from HTTP; one byte tells SOCKS5 and HTTP apart
      if (first[0] === 0 && first.length < NOTICE_HELLO.length && NOTICE_HELLO.startsWith(first.toString('latin1'))) return;
      clearTimeout(timer);
      s.off('data', onData);
      s.pause();
      if (first.toString('latin1', 0, NOTICE_HELLO.length) === NOTICE_HELLO) return this.noticeConnection(s, first.subarray(NOTICE_HELLO.length));
      s.unshift(first);
      if (first[0] === 0x05) void serveSocks5(s, this.context(abortOn(s), viaBridge));
      else void serveHttp(s, this.context(abortOn(s), viaBridge));
      s.resume();
    };
    s.on('data', onData);
  }

  private noticeConnection(s: Socket, rest: Buffer): void {
    const st = { acks: false, owed: [] as (() => void)[] };
    this.notices.set(s, st);
    // what follows the hello: capability lines (PIPES_LINE, ACKS_LINE), then one ACK per line written;
    // anything else is dropped (a line is bounded: the bridge is the sandbox's, untrusted)
    let line = '';
    const hear = (d: Buffer): void => {
      for (const c of d) {
        if (c === ACK && line === '') st.owed.shift()?.();
        else if (c === 0x0a) {
          if (`${line}\n` === PIPES_LINE) this.bridgePipes = true;
          if (`${line}\n` === ACKS_LINE) st.acks = true;
          line = '';
        } else if (line.length < 64) line += String.fromCharCode(c);
      }
    };
    s.on('data', hear);
    s.resume();
    hear(rest);
    for (const l of this.early.splice(0)) {
      s.write(l);
      // its acknowledgement is owed to nobody (the refusal went already), but it comes, in order
      if (st.acks) st.owed.push(() => {});
    }
  }
}

function abortOn(s: Socket): AbortSignal {
  const ac = new AbortController();
  s.once('close', () => ac.abort());
  return ac.signal;
}
