// The C half of `npm run lint`: every C file git tracks under shims/, native/ and test/c/ (or the files
// named) is as clang-format formats it with the root's .clang-format, except the generated
// shims/gate-shared.h (scripts/gen-c-header.mjs writes it). Fails naming the files and how to fix them;
// `--fix` formats them in place. Reads the files git tracks and runs clang-format (Debian: clang-format);
// pure otherwise.
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const STYLE = join(dirname(fileURLToPath(import.meta.url)), '..', '.clang-format');

const GENERATED = new Set(['shims/gate-shared.h']);

export function cFiles() {
  return execFileSync('git', ['ls-files', '-z', 'shims', 'native', 'test/c'], { encoding: 'utf8' })
    .split('\0')
    .filter((f) => /\.[ch]$/.test(f) && !GENERATED.has(f));
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const fix = process.argv.includes('--fix');
  const named = process.argv.slice(2).filter((a) => a !== '--fix');
  const files = named.length ? named : cFiles();
  const r = spawnSync('clang-format', [fix ? '-i' : '--dry-run', ...(fix ? [] : ['--Werror']), `--style=file:${STYLE}`, ...files], { encoding: 'utf8' });
  if (r.error) {
    console.error(`gate-sh: lint: clang-format cannot be run (${r.error.message}); install it (Debian: apt-get install clang-format)`);
    process.exit(1);
  }
  if (r.status !== 0) {
    const bad = [...new Set([...r.stderr.matchAll(/^(\S+\.[ch]):\d+:\d+: (?:error|warning)/gm)].map((m) => m[1]))];
    console.error(`gate-sh: lint: C files not formatted as .clang-format says: ${bad.join(', ') || r.stderr.trim()}`);
    console.error('  fix: node scripts/check-c-format.mjs --fix');
    process.exit(1);
  }
  if (!fix) console.log(`✔ ${files.length} C files formatted as .clang-format says`);
}
