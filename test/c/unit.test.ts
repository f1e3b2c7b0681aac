/**
 * The C unit tests of the shims' readers of untrusted input (test/c/: memory.c for another process's memory,
 * json.c for the JSON reader, reply.c for gate_parse_reply, join.c for
 * joining a session sandbox's held mounts that changed meanwhile, masks.c for the host sockets' masks), built with make and run here: plain, and under
 * AddressSanitizer and UndefinedBehaviorSanitizer; then the fuzz targets (test/c/fuzz/) under both
 * sanitizers, each for a bounded number of generated inputs (their own deterministic driver: the same inputs
 * every run; .ci/run runs them longer, with libFuzzer when clang is there). Each C test prints TAP; a
 * `not ok` line, a sanitizer's report or a non-zero exit fails the test named after it.
 * Builds into test/c/build, build-san (git-ignored); runs only the programs it built.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIR = join(ROOT, 'test', 'c');
const SAN = 'address,undefined';

function make(...args: string[]): void {
  const r = spawnSync('make', ['-s', '-C', DIR, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, `make ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
}

/** Whether the C compiler can build with the sanitizers (its runtime libraries are installed). */
function sanitizers(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'g-san-'));
  try {
    writeFileSync(join(dir, 'a.c'), 'int main(void) { return 0; }\n');
    const r = spawnSync(process.env.CC ?? 'gcc', [`-fsanitize=${SAN}`, '-o', join(dir, 'a'), join(dir, 'a.c')]);
    return r.status === 0 && spawnSync(join(dir, 'a')).status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Run a TAP program: every check passed, and it says how many there were. */
function tap(program: string, ...args: string[]): void {
  const r = spawnSync(program, args, { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
  const out = `${r.stdout}${r.stderr}`;
  assert.doesNotMatch(out, /^not ok /m, out);
  assert.doesNotMatch(out, /Sanitizer|runtime error/, out);
  assert.equal(r.status, 0, out);
  assert.match(r.stdout, /^1\.\.[1-9]\d*$/m, out);
}

const UNITS = ['memory', 'json', 'reply', 'join', 'masks'];
// the readers of untrusted input, each with a fuzz target (join.c tests a path, not a reader)
const FUZZED = ['memory', 'json', 'reply'];
const canSanitize = sanitizers();
const noSanitizers = canSanitize ? false : `the C compiler cannot build with -fsanitize=${SAN} (libasan, libubsan)`;

test('C unit tests, plain build', () => {
  make('unit');
  for (const u of UNITS) tap(join(DIR, 'build', u));
});

test('C unit tests under AddressSanitizer and UndefinedBehaviorSanitizer', { skip: noSanitizers }, () => {
  make('unit', `SAN=${SAN}`);
  for (const u of UNITS) tap(join(DIR, 'build-san', u));
});

test('fuzz targets, a bounded run each under both sanitizers (deterministic inputs)', { skip: noSanitizers }, () => {
  make('fuzz', `SAN=${SAN}`);
  const cwd = mkdtempSync(join(tmpdir(), 'g-fuzz-'));
  try {
    for (const t of FUZZED) {
      const seeds = join(DIR, 'fuzz', 'seeds', t);
      const r = spawnSync(join(DIR, 'build-san', `fuzz-${t}`), ['-runs=3000', '-max_total_time=20', seeds], { cwd, encoding: 'utf8' });
      assert.equal(r.status, 0, `fuzz-${t}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /^fuzz: \d+ inputs, no failure$/m);
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
