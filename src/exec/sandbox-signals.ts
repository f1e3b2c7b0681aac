/**
 * Signals for a command under bubblewrap. bwrap forwards none: a signal sent to it kills bwrap, and
 * `--die-with-parent` then SIGKILLs the command (no trap runs, the status is bwrap's). So signals go to
 * the command itself: bwrap's one child (with --unshare-pid, the command is that child; it is pid 2
 * inside), found through /proc/<bwrap>/task/<bwrap>/children. Before bwrap has forked, bwrap gets it.
 */
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/** Host pid of the command bwrap started, or null (not forked yet, or gone). */
export function sandboxedCommandPid(bwrapPid: number): number | null {
  try {
    const first = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, 'utf8').trim().split(/\s+/)[0];
    const pid = Number(first);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
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
