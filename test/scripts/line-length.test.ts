/**
 * The line-length half of `npm run lint` (scripts/check-line-length.mjs): a code line over 160 characters
 * fails, naming file:line; a line made long by one long message literal passes; the checkout passes.
 * Runs the script on temp files; writes only under the temp folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const check = (files: string[]) => spawnSync(process.execPath, [join(ROOT, 'scripts', 'check-line-length.mjs'), ...files], { cwd: ROOT, encoding: 'utf8' });

test('a code line over 160 characters fails the check; one long message literal does not; the checkout passes', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'g-len-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const code = join(dir, 'code.ts');
  const args = Array.from({ length: 30 }, (_, i) => `arg${i}`).join(', ');
  writeFileSync(code, `export const short = 1;\nexport function f(${args}): number { return ${args.replace(/, /g, ' + ')}; }\n`);
  const bad = check([code]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, new RegExp(`^${code.replace(/[.]/g, '\\.')}:2: \\d+ characters \\(limit 160\\)\n`));
  const message = join(dir, 'message.ts');
  writeFileSync(message, `throw new Error(\`gate-sh: ${'a long message that says exactly what went wrong '.repeat(4)}\`);\n`);
  assert.equal(check([message]).status, 0);
  const all = check([]);
  assert.equal(all.status, 0, all.stderr);
});
