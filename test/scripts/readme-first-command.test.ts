/**
 * scripts/readme-first-command.mjs: the README's first command as .ci/run reads it (the first line of the
 * first ```sh block, without its comment) and the text its output must contain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const SCRIPT = join(ROOT, 'scripts', 'readme-first-command.mjs');

function read(readme: string | undefined, ...flags: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'g-readme-'));
  try {
    const args = [SCRIPT, ...flags];
    if (readme !== undefined) writeFileSync(join(dir, 'README.md'), readme), args.push(join(dir, 'README.md'));
    return spawnSync(process.execPath, args, { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the repository README's first command installs, then runs gate-sh, and says what it prints", () => {
  const cmd = read(undefined);
  assert.equal(cmd.status, 0, cmd.stderr);
  assert.match(cmd.stdout, /^npm install && \.\/bin\/gate-sh -lc '.*'\n$/);
  assert.doesNotMatch(cmd.stdout, /#/);
  assert.equal(read(undefined, '--expect').stdout, 'hello from gate-sh\n');
});

test('the first line of the first sh block, comment removed, # inside quotes kept', () => {
  const md = "# t\n\n```js\nnot this\n```\n\n```sh\n\n# a comment line\nmake && ./x -c 'echo a#b c && ls'   # trailing\nnpm test\n```\n";
  assert.equal(read(md).stdout, "make && ./x -c 'echo a#b c && ls'\n");
  assert.equal(read(md, '--expect').stdout, 'a#b c\n');
});

test('a README without a sh block is an error, not an empty command', () => {
  const r = read('# nothing to run\n');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /no ```sh block/);
});
