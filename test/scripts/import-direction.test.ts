/**
 * The import-direction check (.dependency-cruiser.cjs, run by `npm run lint`): the real src/ passes, and a
 * copy of it with one of each bad import planted fails, naming each rule and its two files: an upward import
 * (paths/, the bottom layer, importing from cli/, the top), an import of a folder README.md's Architecture
 * section does not list, an import from another folder that names a file inside it instead of its index.ts,
 * and a file that imports its own folder's index.ts (a cycle through the index); an import through an index
 * planted beside them is none. Runs dependency-cruiser on the checkout and a temp copy; writes only under
 * the temp folder.
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

test('each kind of bad import planted in one copy of the tree fails the check, naming its rule and both files; an import through an index does not', (t) => {
  // one copy, one cruise (a cruise of src/ costs seconds): each planted import is told apart by its own file
  const dir = copyTree();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // upward: paths/, the bottom layer, importing from cli/, the top
  const top = readdirSync(join(dir, 'src', 'cli')).find((f) => f.endsWith('.ts'));
  assert.ok(top);
  appendFileSync(join(dir, 'src', 'paths', 'paths.ts'), `\nimport type {} from '../cli/${top.replace(/\.ts$/, '.js')}';\n`);
  // a folder README.md's Architecture section does not list
  mkdirSync(join(dir, 'src', 'misc'));
  writeFileSync(join(dir, 'src', 'misc', 'a.ts'), 'export const a = 1;\n');
  appendFileSync(join(dir, 'src', 'cli', 'gate.ts'), "\nimport '../misc/a.js';\n");
  // another folder's file instead of its index.ts, beside the same import through the index
  appendFileSync(join(dir, 'src', 'exec', 'bash.ts'), "\nimport type { GatePaths } from '../paths/paths.js';\nexport type PathsBypassing = GatePaths;\n");
  appendFileSync(join(dir, 'src', 'exec', 'sandbox-run.ts'), "\nimport type { Env as E2 } from '../paths/index.js';\nexport type EnvThroughIndex = E2;\n");
  // a file importing its own folder's index.ts (a cycle through the index)
  appendFileSync(join(dir, 'src', 'exec', 'plan.ts'), "\nimport type {} from './index.js';\n");
  const r = cruise(dir);
  assert.ok(r.status !== null && r.status > 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`error paths-imports-upward: src/paths/paths\\.ts → src/cli/${top.replace('.', '\\.')}`));
  assert.match(r.stdout, /error folder-not-in-architecture: src\/cli\/gate\.ts → src\/misc\/a\.ts/);
  assert.match(r.stdout, /error not-through-index: src\/exec\/bash\.ts → src\/paths\/paths\.ts/);
  assert.match(r.stdout, /error own-index-inside: src\/exec\/plan\.ts → src\/exec\/index\.ts/);
  assert.doesNotMatch(r.stdout, /src\/exec\/sandbox-run\.ts → src\/paths\/index\.ts/, 'an import through the index is no violation');
});
