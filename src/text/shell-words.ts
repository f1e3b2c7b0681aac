/**
 * The one way gate-sh writes a word or a command as shell source that bash reads back exactly (a launcher's
 * exec line, a hook's rewritten command, an alias, a completion script, a run's prelude): through
 * shell-quote, whose quoting bash reads back whatever the text holds (quotes, `!`, `$`, newlines). Plain
 * words stay bare. For showing a command to a person, src/text/display.ts (displayWord, displayCommand)
 * instead: it also makes hidden characters visible. Pure.
 */
import { quote } from 'shell-quote';

/** One word as shell source. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : quote([w]);
}

/** Words as one shell command line. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
