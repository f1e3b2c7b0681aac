// The README's first command, read from README.md itself (the one place it is kept): the first line of the
// first ```sh block, without its trailing `# comment`. .ci/run runs it on its fresh clone after `npm install`
// and checks it (scripts/check-first-command.sh); test/scripts/readme-first-command.test.ts pins the parse.
// Pure parsing plus a CLI: `node scripts/readme-first-command.mjs [README]` prints the command,
// `--expect` prints what its output must contain (the text its first `echo` prints).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** { command, expect } from the README's text; throws when there is no ```sh block with a command. */
export function firstCommand(readme) {
  const block = /^```sh\n([\s\S]*?)^```/m.exec(readme);
  const line = block?.[1].split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (!line) throw new Error("README.md has no ```sh block with a command in it");
  const command = stripComment(line).trim();
  // the text of the first `echo WORDS` (quoted or not), up to the end of its word list
  const echo = /(?:^|[\s;&|'"])echo ((?:[^&|;'"\s]+ ?)+)/.exec(command);
  return { command, expect: echo ? echo[1].trim() : '' };
}

/** The line up to an unquoted `#` that starts a word (a shell comment). */
function stripComment(line) {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--')) ?? new URL('../README.md', import.meta.url);
  const r = firstCommand(readFileSync(file, 'utf8'));
  process.stdout.write((args.includes('--expect') ? r.expect : r.command) + '\n');
}
