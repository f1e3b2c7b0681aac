/**
 * The C half of `npm run lint` (scripts/check-c-format.mjs): a C file not laid out as .clang-format says
 * fails, naming it, and passes once --fix has formatted it; the checkout passes. Runs the script on temp
 * files; writes only under the temp folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const script = (name: string, args: string[]) => spawnSync(process.execPath, [join(ROOT, 'scripts', name), ...args], { cwd: ROOT, encoding: 'utf8' });

test('C laid out otherwise than .clang-format says fails the check, naming the file; --fix formats it; the checkout passes', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'g-cfmt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const c = join(dir, 'bad.c');
  writeFileSync(c, 'int  f( int a ){\n    return a+1 ;}\n');
  const bad = script('check-c-format.mjs', [c]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, new RegExp(`gate-sh: lint: C files not formatted as .clang-format says: ${c.replace(/[.]/g, '\\.')}`));
  assert.equal(script('check-c-format.mjs', ['--fix', c]).status, 0);
  assert.equal(readFileSync(c, 'utf8'), 'int f(int a) { return a + 1; }\n');
  assert.equal(script('check-c-format.mjs', [c]).status, 0);
  const all = script('check-c-format.mjs', []);
  assert.equal(all.status, 0, all.stderr);
});
