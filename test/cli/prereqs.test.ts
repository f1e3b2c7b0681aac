/**
 * Issue 32, finding 10: `npm test` on a machine that lacks a prerequisite stops before running anything,
 * with the list of what is missing and the one apt-get line (README "Prerequisites"); with everything there
 * the same runner runs the suites. Runs the real test/run.mjs with a PATH of its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const PROGRAMS = ['bwrap', 'busybox', 'tmux', 'unshare', 'autoconf', 'automake', 'pytest-3', 'git', 'make', 'gcc', 'python3', 'clang-format', 'bash', 'sh'];

function which(name: string): string {
  return spawnSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
}

function runner(path: string) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PATH: path };
  delete env.GATE_TEST_NO_PREREQS;
  delete env.NODE_TEST_CONTEXT; // a runner of its own, reporting as from a terminal
  return spawnSync(process.execPath, ['test/run.mjs', 'cli/version-help'], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
}

test('the test runner names what is missing and runs nothing; with everything there it runs', { timeout: 180_000 }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'g-prereq-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lacking = join(dir, 'lacking');
  const full = join(dir, 'full');
  for (const d of [lacking, full]) spawnSync('mkdir', [d]);
  for (const p of PROGRAMS) {
    const at = which(p);
    assert.ok(at, `${p} is installed on this machine`);
    symlinkSync(at, join(full, p));
    if (p !== 'tmux' && p !== 'autoconf') symlinkSync(at, join(lacking, p));
  }
  const r = runner(lacking);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /the tests need programs this machine lacks: tmux \(tmux\), autoconf \(autoconf\)\n/);
  assert.match(r.stderr, /sudo apt-get install -y bubblewrap busybox-static tmux util-linux autoconf automake python3-pytest git make gcc python3 clang-format\n/);
  assert.match(r.stderr, /nothing ran/);
  assert.doesNotMatch(r.stdout + r.stderr, /ℹ tests/);
  const ok = runner(`${full}:${process.env.PATH}`);
  assert.equal(ok.status, 0, ok.stderr + ok.stdout);
  assert.match(ok.stdout, /ℹ pass \d+/);
});
