/**
 * The import-direction check (.dependency-cruiser.cjs, run by `npm run lint`): the real src/ passes, and a
 * copy of it with one upward import planted (paths/, the bottom layer, importing a type from cli/, the top) fails,
 * naming the rule and the two files; so does an import of a folder README.md's Architecture section does not
 * list, an import from another folder that names a file inside it instead of its index.ts, and a file that imports
 * its own folder's index.ts (a cycle through the index). Runs dependency-cruiser on temp copies; reads the checkout, writes only under the temp folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const cruise = (dir: string) =>
  spawnSync(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: dir, encoding: 'utf8' });

/** src/, README.md, the check's configuration and tsconfig.json copied into a temp folder. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'g-imports-'));
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const f of ['README.md', '.dependency-cruiser.cjs', 'tsconfig.json']) cpSync(join(ROOT, f), join(dir, f));
  return dir;
}

test('the import-direction check passes on the real tree', () => {
  const r = cruise(ROOT);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /no dependency violations found \(\d+ modules/);
});

test('an upward import planted in a copy of the tree fails the check, naming the rule and both files', (t) => {
  const dir = copyTree();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const top = readdirSync(join(dir, 'src', 'cli')).find((f) => f.endsWith('.ts'));
  assert.ok(top);
  appendFileSync(join(dir, 'src', 'paths', 'paths.ts'), `\nimport type {} from '../cli/${top.replace(/\.ts$/, '.js')}';\n`);
  const r = cruise(dir);
  // depcruise's status is the count of errors: the file named is also not cli/'s index (not-through-index)
  assert.ok(r.status !== null && r.status > 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`error paths-imports-upward: src/paths/paths\\.ts → src/cli/${top.replace('.', '\\.')}`));
});

test('an import of a folder the README does not list fails the check', (t) => {
  const dir = copyTree();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'src', 'misc'));
  writeFileSync(join(dir, 'src', 'misc', 'a.ts'), 'export const a = 1;\n');
  appendFileSync(join(dir, 'src', 'cli', 'gate.ts'), "\nimport '../misc/a.js';\n");
  const r = cruise(dir);
  assert.ok(r.status !== null && r.status > 0, r.stdout + r.stderr);
  assert.match(r.stdout, /error folder-not-in-architecture: src\/cli\/gate\.ts → src\/misc\/a\.ts/);
});

test("an import from another folder that bypasses the folder's index.ts fails the check; through the index it passes", (t) => {
  const dir = copyTree();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const exec = join(dir, 'src', 'exec', 'bash.ts');
  appendFileSync(exec, "\nimport type { Env } from '../paths/index.js';\nexport type EnvThroughIndex = Env;\n");
  const through = cruise(dir);
  assert.equal(through.status, 0, through.stdout + through.stderr);
  appendFileSync(exec, "\nimport type { GatePaths } from '../paths/paths.js';\nexport type PathsBypassing = GatePaths;\n");
  const r = cruise(dir);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /error not-through-index: src\/exec\/bash\.ts → src\/paths\/paths\.ts/);
});

test("a file that imports its own folder's index.ts fails the check (an import cycle through the index)", (t) => {
  const dir = copyTree();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  appendFileSync(join(dir, 'src', 'exec', 'plan.ts'), "\nimport type {} from './index.js';\n");
  const r = cruise(dir);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /error own-index-inside: src\/exec\/plan\.ts → src\/exec\/index\.ts/);
});
