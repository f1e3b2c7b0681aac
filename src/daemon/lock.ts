/**
 * One daemon per session: an O_CREAT|O_EXCL lock file holding the owner's pid.
 *
 * Why this scheme: Node has no flock, and O_EXCL creation is atomic on local filesystems. A lock whose pid
 * is dead (or reused by a process that is not a gate daemon) is stale; breaking it is itself guarded by a
 * short-lived O_EXCL "break" file so that two starters that both saw the same stale lock cannot both win:
 * the second re-reads the lock under the break file, finds a live owner and backs off.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';

export interface LockHandle {
  path: string;
  release(): void;
}

export type LockResult = { ok: true; lock: LockHandle } | { ok: false; owner: number };

/** Try to take the lock; never waits for a live owner. */
export function acquireLock(path: string, pid = process.pid): LockResult {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${pid}\n`);
      closeSync(fd);
      return { ok: true, lock: { path, release: () => releaseLock(path, pid) } };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = readOwner(path);
    if (owner !== undefined && isGateProcess(owner)) return { ok: false, owner };
    breakStale(path, owner);
  }
  return { ok: false, owner: readOwner(path) ?? -1 };
}

export function readOwner(path: string): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Alive, and (where /proc tells us) a node process running gate: guards against pid reuse. */
export function isGateProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('gate');
  } catch {
    return true;
  }
}

function breakStale(path: string, sawOwner: number | undefined): void {
  const guard = `${path}.break`;
  try {
    // A break file older than 10 s belongs to a starter that died mid-break.
    if (Date.now() - statSync(guard).mtimeMs > 10_000) unlinkSync(guard);
  } catch {
    /* no guard file */
  }
  let fd: number;
  try {
    fd = openSync(guard, 'wx', 0o600);
  } catch {
    return; // someone else is breaking it; the caller retries
  }
  try {
    const now = readOwner(path);
    if (now === sawOwner && (now === undefined || !isGateProcess(now))) {
      try {
        unlinkSync(path);
      } catch {
        /* already gone */
      }
    }
  } finally {
    closeSync(fd);
    unlinkSync(guard);
  }
}

function releaseLock(path: string, pid: number): void {
  if (readOwner(path) === pid) {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  }
}
