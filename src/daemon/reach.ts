/**
 * Why the daemon does not answer, so callers decide in one ping (well under 2 s) between starting one and
 * failing fast: `down` (no daemon holds the session lock: start one), `unreachable` (a daemon runs, or the
 * socket is hidden or forbidden here: caller is inside another sandbox; starting one would only fail or
 * wait), `slow` (a daemon accepted the connection but did not answer yet: wait for it).
 * Not pure (one socket, the lock file, /proc). The daemon's answers are trusted only as far as ping.ts does.
 */
import { existsSync } from 'node:fs';
import { unreachableMessage } from '../protocol/client.js';
import type { Env, GatePaths } from '../protocol/paths.js';
import { probeDaemon } from './ping.js';

export { unreachableMessage };
import { lockHeld, pidNamespace, readOwner } from './lock.js';

export type Reach =
  | { state: 'up'; info: Record<string, unknown> }
  | { state: 'down'; why: string }
  | { state: 'unreachable'; why: string }
  | { state: 'slow'; why: string };

/** Errors a sandbox gives for a socket it forbids (as client.ts's DENIED_ERRNOS, by name). */
const DENIED_CODES = new Set(['EPERM', 'EACCES', 'EROFS']);

/** One ping, then the lock and the folders, to say which of the four it is. */
export async function reachDaemon(paths: GatePaths, env: Env, timeoutMs = 1000): Promise<Reach> {
  const r = await probeDaemon(paths, timeoutMs);
  if (r.ok) return { state: 'up', info: r.info };
  if (r.code === 'timeout') return { state: 'slow', why: `no answer on ${paths.streamSock} within ${timeoutMs} ms` };
  if (DENIED_CODES.has(r.code)) return { state: 'unreachable', why: `connecting to ${paths.streamSock} is refused with ${r.code}` };
  return diagnoseAbsent(paths, env, r.code);
}

/** The socket is missing or refuses (ENOENT, ECONNREFUSED, ...): is a daemon alive all the same? */
export function diagnoseAbsent(paths: GatePaths, env: Env, code: string): Reach {
  const held = safeLockHeld(paths.lockFile);
  if (held) {
    const owner = readOwner(paths.lockFile);
    if (!owner?.ready) return { state: 'slow', why: `a gate daemon is starting or stopping (it holds ${paths.lockFile}, its sockets are not bound)` };
    const ns = pidNamespace();
    const who = owner ? `pid ${owner.pid}${owner.pidNamespace && ns && owner.pidNamespace !== ns ? ` in PID namespace ${owner.pidNamespace}, this process is in ${ns}` : ''}` : 'pid unknown';
    return { state: 'unreachable', why: `a gate daemon holds the session lock ${paths.lockFile} (${who}) but its socket ${paths.streamSock} gives ${code}` };
  }
  // XDG_RUNTIME_DIR exists for as long as the user's session does: missing here means not mounted here
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && !existsSync(xdg)) return { state: 'unreachable', why: `the runtime folder ${xdg} (XDG_RUNTIME_DIR) does not exist here` };
  return { state: 'down', why: `${code === 'ENOENT' ? 'no socket' : code === 'ECONNREFUSED' ? 'stale socket' : code} at ${paths.streamSock}` };
}

function safeLockHeld(path: string): boolean {
  try {
    return lockHeld(path) === true;
  } catch {
    return false; // no native addon or no F_OFD_GETLK: say nothing rather than guess
  }
}
