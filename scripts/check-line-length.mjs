// The line-length half of `npm run lint` (Biome, the other half, has no line-length rule: its width is a
// formatter setting, and the code is not formatter-formatted). Fails, naming file:line, on a line of
// src/, test/ or scripts/ longer than 160 characters, unless one string, template or regex literal of 60
// characters or more makes it long and what is left of the line is short (a message, script or pattern
// that only splitting the literal would wrap: ESLint's max-len ignoreStrings/ignoreTemplateLiterals).
// C is held to 120 characters (C_LIMIT, as .clang-format lays it out: shims/, native/ and test/c/, but the
// generated shims/gate-shared.h). Reads the files git tracks; pure otherwise.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const LIMIT = 160;
export const C_LIMIT = 120;
const C_FILES = /^(shims|native|test\/c)\/(?!gate-shared\.h$).*\.[ch]$/;
const LONG_LITERAL = 60;
const REST = 100;

/** The longest literal-looking span of a line: first to last quote of one kind, or a regex literal. */
function literalSpan(line) {
  let best = 0;
  for (const q of ['`', "'", '"']) {
    const i = line.indexOf(q);
    const j = line.lastIndexOf(q);
    if (j > i) best = Math.max(best, j - i + 1);
  }
  for (const m of line.matchAll(/(?<=^\s*|[(=,:]\s*)\/(?:[^/\\\n]|\\.)+\/[a-z]*/g)) best = Math.max(best, m[0].length);
  return best;
}

/** The lines of `text` over the limit that no long literal excuses: [line number, length]. */
export function overLong(text) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    if (line.length <= LIMIT) return;
    const span = literalSpan(line);
    if (span < LONG_LITERAL || line.length - span > REST) out.push([i + 1, line.length]);
  });
  return out;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const files = process.argv.length > 2
    ? process.argv.slice(2)
    : execFileSync('git', ['ls-files', 'src', 'test', 'scripts'], { encoding: 'utf8' }).split('\n').filter((f) => /\.(ts|mjs|cjs)$/.test(f));
  let bad = 0;
  if (process.argv.length <= 2) {
    const c = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'shims', 'native', 'test/c'], { encoding: 'utf8' });
    for (const f of c.split('\n').filter((f) => C_FILES.test(f)))
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.length <= C_LIMIT) return;
          process.stderr.write(`${f}:${i + 1}: ${line.length} characters (limit ${C_LIMIT} in C)\n`);
          bad++;
        });
  }
  for (const f of files) {
    for (const [n, len] of overLong(readFileSync(f, 'utf8'))) {
      process.stderr.write(`${f}:${n}: ${len} characters (limit ${LIMIT})\n`);
      bad++;
    }
  }
  if (bad) {
    process.stderr.write(`gate-sh: ${bad} line(s) over ${LIMIT} characters: wrap them\n`);
    process.exit(1);
  }
}
