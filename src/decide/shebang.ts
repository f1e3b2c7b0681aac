/**
 * `node /usr/bin/npm test` is how the kernel runs `/usr/bin/npm test` (`#!/usr/bin/env node`): decided as
 * the script it runs, so a rule about `npm test` covers its interpreter's exec too (issue 17). Only for a
 * script in a folder only root writes, whose `#!` line names this very interpreter: then running it through
 * the interpreter runs exactly what running the script would. Pure: the caller reads the `#!` line.
 */
import { SYSTEM_BIN } from './exec-command.js';

export const INTERPRETERS: ReadonlySet<string> = new Set(['node', 'nodejs', 'python3', 'python', 'perl', 'ruby', 'bash', 'sh']);

/** `[script, args...]` when `program argv[1..]` is an interpreter running a system script of its own kind. */
export function scriptRunByInterpreter(program: string, argv: readonly string[], shebangOf: (path: string) => string | null): string[] | null {
  const interp = program.slice(program.lastIndexOf('/') + 1);
  const path = argv[1];
  if (!INTERPRETERS.has(interp) || !path?.startsWith('/')) return null;
  if (!SYSTEM_BIN.has(path.slice(0, path.lastIndexOf('/')))) return null;
  const line = shebangOf(path);
  if (line === null) return null;
  const words = line.trim().split(/\s+/);
  // `#!/usr/bin/env node` or `#!/usr/bin/node` (no options: they would change what runs)
  const named = words[0]?.endsWith('/env') && words.length === 2 ? words[1] : words.length === 1 ? words[0]?.slice(words[0].lastIndexOf('/') + 1) : undefined;
  return named === interp ? [path, ...argv.slice(2)] : null;
}
