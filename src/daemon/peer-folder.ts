/**
 * Which client folder a process connected to stream.sock replies in, by the kernel's word (requests are
 * bound to their run): the stream peer's pid (SO_PEERCRED) and what that process sees at the clients'
 * folder, read through /proc/<pid>/root (its own root and mount namespace). The stream twin of replyFolder
 * (src/paths/paths.ts), which reads the same from a datagram's bound reply path:
 *   ''        the process sees the clients' folder itself (the same folder as the daemon's): outside every
 *             sandbox and guard, where a datagram client binds directly in `req/c`;
 *   a run id  it sees an empty clients' folder with one run's folder in it, that very folder (the same one
 *             as the daemon's, not one of the same name): inside that run's sandbox or guard;
 *   undefined anything else (gone, several, none): its requests name no run.
 * A process of a sandbox cannot change this answer: a mount namespace it makes can hide its own folder but
 * not reach another's, and the folder is compared by device and inode, not by name. A process the daemon
 * may not look into (not dumpable, in the daemon's own user namespace: what no sandbox or guard of gate-sh
 * makes for a non-root user, whose runs all live in user namespaces of their own) counts as outside.
 * Not pure (reads /proc). Trust boundary: the pid is the kernel's, every file read is the kernel's view.
 */
import { readdirSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { type GatePaths, isRunFolderName } from '../paths/index.js';

function stat(p: string): BigIntStats | undefined {
  try {
    return statSync(p, { bigint: true });
  } catch {
    return undefined;
  }
}

function same(a: BigIntStats | undefined, b: BigIntStats | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/** Whether `pid` lives in the daemon's pid namespace (one NSpid entry): no sandbox of gate-sh's, all of which
 * have a pid namespace of their own. */
function inDaemonPidNamespace(pid: number): boolean {
  try {
    const ns = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1].trim().split(/\s+/);
    return ns?.length === 1;
  } catch {
    return false;
  }
}

export function peerFolder(paths: Pick<GatePaths, 'clientDir'>, pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const view = `/proc/${pid}/root${paths.clientDir}`;
  let seen: BigIntStats;
  try {
    seen = statSync(view, { bigint: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // not ours to look into (EACCES): a host process (the supervisor of a run, which is not dumpable)
    return (code === 'EACCES' || code === 'EPERM') && process.getuid?.() !== 0 && inDaemonPidNamespace(pid) ? '' : undefined;
  }
  if (same(seen, stat(paths.clientDir))) return '';
  let names: string[];
  try {
    names = readdirSync(view);
  } catch {
    return undefined;
  }
  const found = names.filter((n) => isRunFolderName(n) && same(stat(join(view, n)), stat(join(paths.clientDir, n))));
  return found.length === 1 ? found[0] : undefined;
}
