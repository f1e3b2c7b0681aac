/**
 * The process at the other end of a Unix stream connection, as the kernel recorded it at connect
 * (SO_PEERCRED, through the native addon): the key connections are counted by (transport/conn-table.ts), and
 * the process whose view of the client folders binds a stream request to its run (peer-folder.ts).
 * Not pure (a getsockopt). Trust: the kernel's word, not anything the peer sent.
 */
import type { Socket } from 'node:net';
import { gateNative } from '../exec/index.js';

/** The peer's pid in the daemon's pid namespace, or undefined when the connection has no descriptor any more
 * or the addon is missing. */
export function socketPid(s: Socket): number | undefined {
  const fd = (s as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  try {
    return gateNative().peerCred(fd).pid;
  } catch {
    return undefined;
  }
}

/** "pid N", or undefined (see socketPid). */
export function socketPeer(s: Socket): string | undefined {
  const pid = socketPid(s);
  return pid === undefined ? undefined : `pid ${pid}`;
}
