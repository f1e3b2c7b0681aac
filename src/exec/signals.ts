/**
 * Signal forwarding: signals sent to gate-sh reach the bash running the script. A terminal's Ctrl-C
 * already reaches the whole foreground process group (gate-sh and bash share it, so terminal programs keep
 * the terminal); forwarding it again to bash is harmless, bash acts on one SIGINT per wait.
 */
import type { ChildProcess } from 'node:child_process';

export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGWINCH'];

/** Install forwarders to `child`; returns the function that removes them. */
export function forwardSignals(child: Pick<ChildProcess, 'kill' | 'exitCode' | 'signalCode'>, signals = FORWARDED_SIGNALS): () => void {
  const handlers = signals.map((sig) => {
    const h = (): void => {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          child.kill(sig);
        } catch {
          // the child exited between the check and the kill
        }
      }
    };
    process.on(sig, h);
    return [sig, h] as const;
  });
  return () => {
    for (const [sig, h] of handlers) process.removeListener(sig, h);
  };
}

/** bash's convention for a status: the exit code, or 128+n when killed by signal n. */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null, signalNumbers: Record<string, number>): number {
  if (code !== null) return code;
  if (signal !== null) return 128 + (signalNumbers[signal] ?? 0);
  return 126;
}
