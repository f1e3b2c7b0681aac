/**
 * One daemon per session: a write lock the kernel holds on <session>/daemon.lock (an open-file-description
 * lock, fcntl F_OFD_SETLK, through the native addon).
 *
 * Why this scheme: the kernel drops the lock when its holder dies and tells holders apart by open file, not by
 * pid. A pid written in a file (the scheme before) let a starter in another PID namespace (a sandbox's) see
 * a live daemon's pid as dead, break its lock and delete its sockets. The lock file is never removed:
 * removing it would let a second starter lock a new file while the first still holds the old one. Its
 * content (pid and PID namespace of the holder) is for people and `gate daemon stop`, never the lock.
 * Not pure (files, fcntl). Trust: the file lives in the owner-only session folder.
 */
import { closeSync, constants, ftruncateSync, openSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import { gateNative } from '../exec/index.js';

export interface LockHandle {
  path: string;
  /** Write down whether the daemon answers on its sockets (while not, a missing socket means "starting" or
   * "stopping", not "removed"). */
  markReady(ready: boolean): void;
  release(): void;
}

/** Who holds the lock, as it wrote itself down: its pid as seen from its own PID namespace. */
export interface LockOwner {
  pid: number;
  /** `pid:[inode]` of the holder's PID namespace, when it could read it */
  pidNamespace?: string;
  /** its sockets are bound (missing sockets then mean they were removed, or are hidden from the reader) */
  ready?: boolean;
}

export type LockResult = { ok: true; lock: LockHandle } | { ok: false; owner: LockOwner | undefined };

/** This process's PID namespace (`pid:[4026531836]`), or undefined without /proc. */
export function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** Try to take the lock; never waits for a holder. The descriptor stays open (close-on-exec) until release. */
export function acquireLock(path: string): LockResult {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  let taken = false;
  try {
    taken = gateNative().tryLock(fd);
  } finally {
    if (!taken) closeSync(fd);
  }
  if (!taken) return { ok: false, owner: readOwner(path) };
  const ns = pidNamespace();
  const write = (ready: boolean): void => {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}${ns ? ` ${ns}` : ''}${ready ? ' ready' : ''}\n`, 0);
  };
  write(false);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    try {
      ftruncateSync(fd, 0); // no owner written down once it is gone
    } finally {
      closeSync(fd); // drops the lock
    }
  };
  return { ok: true, lock: { path, release, markReady: (ready) => released || write(ready) } };
}

/**
 * Is the lock held by someone (another open file)? Asked without taking it, so a daemon starting at the same
 * moment is never refused because of the question. undefined when there is no lock file to ask about.
 */
export function lockHeld(path: string): boolean | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    return gateNative().isLocked(fd);
  } finally {
    closeSync(fd);
  }
}

/** The holder as written in the lock file ("<pid> [pid:[ns]] [ready]"); undefined when empty or unreadable. */
export function readOwner(path: string): LockOwner | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^(\d+)(?: (pid:\[\d+\]))?( ready)?\s*$/.exec(text);
  if (!m) return undefined;
  const pid = Number(m[1]);
  return pid > 0 ? { pid, ...(m[2] ? { pidNamespace: m[2] } : {}), ...(m[3] ? { ready: true } : {}) } : undefined;
}
