/**
 * Codex `command_might_be_dangerous`: the argv itself, then every literal command of a `bash|zsh|sh -c|-lc`
 * script (inside loops, substitutions, pipelines; wrappers' inner commands too). Used to ask or forbid,
 * never to prove safety. A script with a syntax error yields no literal commands (Codex parity).
 */
import { analyzeScript, nestedShell } from '../script/index.js';
import { dangerousCommand, type DangerKind, type DangerOptions } from './dangerous.js';

export function commandMightBeDangerous(argv: readonly string[], opts: DangerOptions = {}): DangerKind | null {
  const own = dangerousCommand(argv, opts);
  if (own) return own;
  const inv = nestedShell([...argv]);
  if (!inv) return null;
  const a = analyzeScript(inv.script);
  const cmds = a.kind === 'plain' ? a.commands : a.literalCommands;
  for (const c of cmds) {
    for (const words of [c.argv, ...c.inner]) {
      const d = dangerousCommand(words, opts);
      if (d) return d;
    }
  }
  return null;
}
