/**
 * Wrappers with a known grammar that only change how a command runs (time limit, priority, buffering,
 * environment, hang-up handling) are decided as the command they run: `timeout 30 git status`
 * is what `git status` is. Only when no rule names the wrapper itself and the approval policy's heuristic
 * is all that asks; never for wrappers that change who runs it (`sudo`, `doas`) or what runs (`xargs`,
 * `find -exec`). Pure.
 */
import type { Decision } from '../rules/index.js';

/** Bash builtins that only read state and print, or change only the shell's own options and variables
 * (`set -euo pipefail`, `unset X`: agents start scripts so): bash runs them itself, nothing is exec'd and
 * nothing outside the shell changes; every program the script runs after them is still decided. Codex's
 * known-safe list (kept Codex-exact for parity) does not have them; gate-sh's decision does. */
export const READ_ONLY_BUILTINS = new Set(['test', '[', ':', 'printf', 'type', 'set', 'unset']);

/** `command -v x` / `command -V x`: only says what x is. */
export function isReadOnlyBuiltin(argv: readonly string[]): boolean {
  const name = argv[0] ?? '';
  if (name === 'command') return argv[1] === '-v' || argv[1] === '-V';
  // printf -v NAME sets a variable of the shell: still nothing outside it
  return READ_ONLY_BUILTINS.has(name);
}

/** Wrappers decided as their inner command. */
export const DECIDED_AS_INNER = new Set(['timeout', 'nice', 'nohup', 'stdbuf', 'env', 'time', 'command', 'ionice', 'taskset', 'chrt']);

export function basenameOf(program: string): string {
  return program.slice(program.lastIndexOf('/') + 1);
}

/** May this wrapper be decided as its inner commands, given its own evaluation's sources? */
export function decidedAsInner(program: string, inner: readonly (readonly string[])[], ownHeuristicOnly: boolean, ownDecision: Decision): boolean {
  return ownHeuristicOnly && ownDecision === 'prompt' && inner.length > 0 && DECIDED_AS_INNER.has(basenameOf(program));
}
