/**
 * The process at the other end of a Unix stream connection, as the kernel recorded it at connect
 * (SO_PEERCRED, through the native addon): the key connections are counted by (protocol/conn-table.ts).
 * Not pure (a getsockopt). Trust: the kernel's word, not anything the peer sent.
 */
import type { Socket } from 'node:net';
import { gateNative } from '../exec/native.js';

/** "pid N", or undefined when the connection has no descriptor any more or the addon is missing. */
export function socketPeer(s: Socket): string | undefined {
  const fd = (s as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  try {
    return `pid ${gateNative().peerCred(fd).pid}`;
  } catch {
    return undefined;
  }
}
