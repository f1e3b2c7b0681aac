/**
 * Why the daemon does not answer, so callers decide in one ping (well under 2 s) between starting one and
 * failing fast: `down` (no daemon holds the session lock: start one), `unreachable` (a daemon runs, or the
 * socket is hidden or forbidden here: caller is inside another sandbox; starting one would only fail or
 * wait), `slow` (a daemon is starting or stopping, or accepted the connection but did not answer yet: wait).
 * Not pure (one socket, the lock file, /proc). The daemon's replies are trusted only as far as ping.ts does.
 */
import { existsSync } from 'node:fs';
import { probeDaemon, unreachableMessage } from '../transport/index.js';
import type { Env, GatePaths } from '../paths/index.js';
import { lockHeld, pidNamespace, readOwner, type LockOwner } from './lock.js';

export { unreachableMessage };

export type Reach =
  | { state: 'up'; info: Record<string, unknown> }
  | { state: 'down'; why: string }
  | { state: 'unreachable'; why: string }
  | { state: 'slow'; why: string };

/** Errors a sandbox gives for a socket it forbids (as client.ts's DENIED_ERRNOS, by name). */
const DENIED_CODES = new Set(['EPERM', 'EACCES', 'EROFS']);

/**
 * The lock, one ping, the lock again. A daemon writes `ready` only while its sockets exist (set after they
 * are bound, cleared before they go), so a missing socket between two `ready` readings is really missing;
 * anything else in between (starting, stopping) is waited for.
 */
export async function reachDaemon(paths: GatePaths, env: Env, timeoutMs = 1000): Promise<Reach> {
  const readyBefore = lockState(paths.lockFile).ready;
  const r = await probeDaemon(paths, timeoutMs);
  if (r.ok) return { state: 'up', info: r.info };
  if (r.code === 'timeout') return { state: 'slow', why: `no answer on ${paths.streamSock} within ${timeoutMs} ms` };
  if (DENIED_CODES.has(r.code)) return { state: 'unreachable', why: `connecting to ${paths.streamSock} is refused with ${r.code}` };
  const after = lockState(paths.lockFile);
  if (after.held && readyBefore && after.ready) {
    const owner = after.owner!;
    const ns = pidNamespace();
    const who = `pid ${owner.pid}${owner.pidNamespace && ns && owner.pidNamespace !== ns ? ` in PID namespace ${owner.pidNamespace}, this process is in ${ns}` : ''}`;
    return { state: 'unreachable', why: `a gate daemon holds the session lock ${paths.lockFile} (${who}) but its socket ${paths.streamSock} gives ${r.code}` };
  }
  if (after.held) return { state: 'slow', why: `a gate daemon is starting or stopping (it holds ${paths.lockFile}, its sockets are not bound)` };
  // XDG_RUNTIME_DIR exists for as long as the user's session does: missing here means not mounted here
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && !existsSync(xdg)) return { state: 'unreachable', why: `the runtime folder ${xdg} (XDG_RUNTIME_DIR) does not exist here` };
  return { state: 'down', why: `${r.code === 'ENOENT' ? 'no socket' : r.code === 'ECONNREFUSED' ? 'stale socket' : r.code} at ${paths.streamSock}` };
}

function lockState(path: string): { held: boolean; ready: boolean; owner?: LockOwner } {
  if (!safeLockHeld(path)) return { held: false, ready: false };
  const owner = readOwner(path);
  return { held: true, ready: owner?.ready === true, owner };
}

function safeLockHeld(path: string): boolean {
  try {
    return lockHeld(path) === true;
  } catch {
    return false; // no native addon or no F_OFD_GETLK: say nothing rather than guess
  }
}
