/**
 * The native addon (native/gate_native.c, built by node-gyp at install): descriptor passing and peer
 * credentials on Unix sockets, which Node's net module cannot do, a plain pipe, the session lock, a
 * terminal's pending line input, and a spawn that does not fork the caller (gate mcp's in-process calls).
 * Loaded lazily: only the daemon (escalation runner, lock), gate-sh's merged stdout+stderr relay, the PTY
 * host, gate mcp and the diagnosis of an unreachable daemon need it.
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Received {
  data: Buffer;
  fds: number[];
}

export interface PeerCred {
  pid: number;
  uid: number;
  gid: number;
}

export interface GateNative {
  /** One recvmsg (non-blocking): null when nothing is ready; empty data = the peer closed. */
  recvFds(fd: number, maxBytes: number): Received | null;
  peerCred(fd: number): PeerCred;
  /** A pipe: [readFd, writeFd], both close-on-exec. */
  pipe(): [number, number];
  /** The session lock (src/client/lock.ts): an open-file-description write lock on the whole file.
   * true when taken; false when another open file description holds it. Never waits. */
  tryLock(fd: number): boolean;
  /** Whether another open file description holds that lock, asked without taking it. */
  isLocked(fd: number): boolean;
  /** What a terminal in canonical mode holds for its reader (lines; each Ctrl-D's EOF mark as eofByte),
   * read without blocking; null when fd is no terminal in canonical mode. */
  takeLineInput(fd: number, eofByte: number): Buffer | null;
  /** Whether spawn() exists here (glibc 2.34 or later at build time, pidfds in the kernel). */
  spawnAvailable(): boolean;
  /** The network proxy's tunnel relay (native/gate_relay.c): one thread of this process splicing the
   * bytes of handed-over socket pairs. relayInit once (false: no thread); relayAdd dups both descriptors
   * (the caller then closes its own) and writes the heads first; with `pipes`, the client socket's peer (the
   * run's bridge) is handed two pipes over it and the bytes go through those (native/gate_relay.c);
   * onClosed(id, up, down, error) once a pair is over; relayClose ends a pair; relayCount says how many. */
  relayInit(onClosed: (id: number, up: number, down: number, error: string | null) => void): boolean;
  relayAdd(clientFd: number, destFd: number, headUp: Buffer | null, headDown: Buffer | null, pipes: boolean, limitUp?: number, limitDown?: number): number;
  relayClose(id: number): boolean;
  relayCount(): number;
  /** Why `fd` is not a listening TCP socket on loopback in another network namespace than this process's
   * (the listener a run's bridge hands over: src/network/listener-handoff.ts); null when it is. */
  relayCheckListener(fd: number): string | null;
  /** posix_spawn of an absolute program path (no PATH search; argv includes argv[0]; env as "K=V") in cwd,
   * in a session of its own, every signal at its default and none blocked. fds[i] is the caller's
   * descriptor the child gets as i (-1: /dev/null for 0-2, closed above); nothing else is inherited.
   * onExit(code, signal) once it has ended (code null when a signal ended it). Throws when nothing
   * started ("spawn <program> ENOENT", as Node says it). Returns the pid. */
  spawn?(program: string, argv: string[], env: string[], cwd: string, fds: number[], onExit: (code: number | null, signal: number) => void): number;
}

export const NATIVE_PATH = join(resolve(dirname(fileURLToPath(import.meta.url)), '../../..'), 'build', 'Release', 'gate_native.node');

let loaded: GateNative | undefined;

export function gateNative(): GateNative {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)(NATIVE_PATH) as GateNative;
    return loaded;
  } catch (e) {
    throw new Error(`the native addon is missing or broken (${NATIVE_PATH}): run 'npm run build' (${(e as Error).message})`);
  }
}
