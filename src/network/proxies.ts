/**
 * The daemon's proxies, one per run whose sandbox has network "rules": opened when pre-flight lets the
 * run go (before its sandbox is built, which binds the folder), closed when the run finishes or is
 * dropped. Each lives in `<session>/net/<run id>/proxy.sock` (src/sandbox/network-bridge.ts), a folder
 * made owner-only, bound into that run's sandbox alone: another run, another session's sandbox or a
 * process outside gate-sh's sandboxes of another user cannot reach it, and what comes in on it is that
 * run's. Grants therefore stay per run: the run id is the socket's, never a client's word.
 * Not pure: folders and sockets under the session folder.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MAX_SOCKET_PATH } from '../paths/index.js';
import { runProxySocket } from '../sandbox/index.js';
import type { Resolver } from './resolve.js';
import { RunProxy } from './run-proxy.js';
import type { NetworkDecider } from './types.js';

/** `<session>/net/<run id>/listen.sock`, beside the proxy socket: where the run's bridge hands over its
 * listener (listener-handoff.ts; shims/gate-netbridge.c finds it beside the socket it is given). */
export function runListenerSocket(proxySocket: string): string {
  return join(dirname(proxySocket), 'listen.sock');
}

export interface NetworkProxiesOptions {
  /** the session folder (`<runtime>/<session>`) */
  sessionDir: string;
  decider: NetworkDecider;
  resolve: Resolver;
  log(line: string): void;
}

export class NetworkProxies {
  private readonly proxies = new Map<string, RunProxy>();

  constructor(private readonly o: NetworkProxiesOptions) {}

  /** Open the run's proxy; false (and a log line) when it cannot be: the run then has no network at all. */
  async open(runId: string): Promise<boolean> {
    if (this.proxies.has(runId)) return true;
    const sock = runProxySocket(this.o.sessionDir, runId);
    if (Buffer.byteLength(sock) > MAX_SOCKET_PATH) {
      this.o.log(`network proxy of run ${runId} not opened: its socket path is longer than ${MAX_SOCKET_PATH} bytes (${sock}); the run has no network`);
      return false;
    }
    try {
      mkdirSync(dirname(dirname(sock)), { recursive: true, mode: 0o700 });
      rmSync(dirname(sock), { recursive: true, force: true });
      mkdirSync(dirname(sock), { mode: 0o700 });
      const p = new RunProxy({
        runId,
        socketPath: sock,
        listenerPath: runListenerSocket(sock),
        decider: this.o.decider,
        resolve: this.o.resolve,
        log: this.o.log,
      });
      await p.listen();
      this.proxies.set(runId, p);
      return true;
    } catch (e) {
      this.o.log(`network proxy of run ${runId} not opened: ${(e as Error).message}; the run has no network`);
      return false;
    }
  }

  /** The run's proxy socket, the proxy opened first if it is not yet (an escalated TurnDefault command of
   * the run: its sandbox reaches the run's proxy too); undefined when it cannot be opened. */
  async route(runId: string): Promise<string | undefined> {
    return (await this.open(runId)) ? runProxySocket(this.o.sessionDir, runId) : undefined;
  }

  /** The run finished: its proxy and its connections end, its folder goes. */
  async close(runId: string): Promise<void> {
    const p = this.proxies.get(runId);
    if (!p) return;
    this.proxies.delete(runId);
    await p.close();
    rmSync(dirname(runProxySocket(this.o.sessionDir, runId)), { recursive: true, force: true });
  }

  /** Close the proxies of runs no longer live (a client that never said its run finished). */
  prune(live: (runId: string) => boolean): void {
    for (const id of [...this.proxies.keys()]) if (!live(id)) void this.close(id);
  }

  get size(): number {
    return this.proxies.size;
  }

  /** Open connections over every run (status, bench). */
  get connections(): number {
    let n = 0;
    for (const p of this.proxies.values()) n += p.connections;
    return n;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.proxies.keys()].map((id) => this.close(id)));
  }
}
