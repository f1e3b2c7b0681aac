/**
 * Signal forwarding: signals sent to gate-sh reach the bash running the script. A terminal's Ctrl-C
 * already reaches the whole foreground process group (gate-sh and bash share it, so terminal programs keep
 * the terminal); forwarding it again to bash is harmless, bash acts on one SIGINT per wait.
 *
 * Install before spawning: a signal that arrives while the child is being started is held and delivered
 * as soon as it exists (otherwise Node's default would apply: death for most, the inspector for SIGUSR1).
 */
import type { ChildProcess } from 'node:child_process';
import { FORWARDED_SIGNALS as SHARED } from '../protocol/index.js';

/** The signals passed on (one list with the C side's: src/protocol/shared-with-c.ts). */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = SHARED;

type Target = Pick<ChildProcess, 'kill' | 'exitCode' | 'signalCode'>;

export interface Forwarder {
  /** the child now exists: deliver what arrived meanwhile, forward from now on */
  attach(child: Target): void;
  /** remove the handlers */
  dispose(): void;
}

export function forwardSignals(signals = FORWARDED_SIGNALS): Forwarder {
  let target: Target | undefined;
  const held: NodeJS.Signals[] = [];
  const send = (sig: NodeJS.Signals): void => {
    if (!target) return void held.push(sig);
    if (target.exitCode !== null || target.signalCode !== null) return;
    try {
      target.kill(sig);
    } catch {
      // the child exited between the check and the kill
    }
  };
  const handlers = signals.map((sig) => [sig, () => send(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  return {
    attach(child) {
      target = child;
      for (const sig of held.splice(0)) send(sig);
    },
    dispose() {
      for (const [sig, h] of handlers) process.removeListener(sig, h);
    },
  };
}

/** bash's convention for a status: the exit code, or 128+n when killed by signal n. */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null, signalNumbers: Record<string, number>): number {
  if (code !== null) return code;
  if (signal !== null) return 128 + (signalNumbers[signal] ?? 0);
  return 126;
}
