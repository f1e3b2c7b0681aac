/**
 * Signals for a command under bubblewrap. bwrap forwards none: a signal sent to it kills bwrap, and
 * `--die-with-parent` then SIGKILLs the command (no trap runs, the status is bwrap's). So signals go to
 * the command itself, found through /proc/<pid>/task/<pid>/children below bwrap. Before bwrap has
 * started the command, bwrap gets it.
 */
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

function firstChild(pid: number): number | null {
  try {
    const n = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Host pid of the command bwrap started, or null (not forked yet, or gone). Depending on its options
 * bwrap runs the command directly or under its own init (pid 1 inside, which ignores signals it has no
 * handler for), so the chain of bwrap processes is walked down to the first process that is not bwrap.
 */
export function sandboxedCommandPid(bwrapPid: number): number | null {
  let pid = bwrapPid;
  for (let depth = 0; depth < 6; depth++) {
    const child = firstChild(pid);
    if (child === null) return null;
    // gate-launch (the kernel layer's supervisor) stands between the spawned process and bwrap
    const name = comm(child);
    if (name !== 'bwrap' && name !== 'gate-launch') return child;
    pid = child;
  }
  return null;
}

/** What a signal forwarder should signal instead of the bwrap child process itself. */
export function sandboxSignalTarget(bwrap: ChildProcess): Pick<ChildProcess, 'kill' | 'exitCode' | 'signalCode'> {
  return {
    kill(sig?: NodeJS.Signals | number): boolean {
      const inner = bwrap.pid ? sandboxedCommandPid(bwrap.pid) : null;
      if (inner === null) return bwrap.kill(sig);
      try {
        process.kill(inner, sig);
        return true;
      } catch {
        return bwrap.kill(sig);
      }
    },
    get exitCode() {
      return bwrap.exitCode;
    },
    get signalCode() {
      return bwrap.signalCode;
    },
  };
}
