/**
 * bin/gate-sh: the bundle is compiled with the build's V8 code cache, and a cache is only ever used with the
 * bundle it was made from. The stale-cache cases run a copy of the launcher over a copied bundle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { GATE_SH_NODE, ROOT, tempEnv } from '../helpers/env.js';

interface Launcher {
  loadBundle(): { exports: { main?: unknown }; cache: 'accepted' | 'rejected' | 'none' };
}
const require = createRequire(import.meta.url);
const BUNDLE_DIR = join(ROOT, 'dist', 'cjs-src', 'cli');

test('the built bundle loads with its code cache accepted by V8', () => {
  const l = require(GATE_SH_NODE) as Launcher;
  const r = l.loadBundle();
  assert.equal(r.cache, 'accepted');
  assert.equal(typeof r.exports.main, 'function');
});

/** A copy of bin/gate-sh over a copy of the bundle; `edit` changes the copy; returns what loadBundle saw. */
function copyAndLoad(dir: string, edit: (bundle: string, cache: string) => void): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'dist', 'cjs-src', 'cli'), { recursive: true });
  copyFileSync(GATE_SH_NODE, join(dir, 'bin', 'gate-sh'));
  copyFileSync(join(ROOT, 'bin', 'package.json'), join(dir, 'bin', 'package.json'));
  const bundle = join(dir, 'dist', 'cjs-src', 'cli', 'gate-sh.bundle.cjs');
  const cache = join(dir, 'dist', 'cjs-src', 'cli', 'gate-sh.bundle.v8cache');
  copyFileSync(join(BUNDLE_DIR, 'gate-sh.bundle.cjs'), bundle);
  copyFileSync(join(BUNDLE_DIR, 'gate-sh.bundle.v8cache'), cache);
  writeFileSync(join(dir, 'dist', 'cjs-src', 'package.json'), '{"type":"commonjs"}\n');
  edit(bundle, cache);
  // a fresh process: the copied bundle resolves its packages from the repository's node_modules
  const probe = `const r = require(${JSON.stringify(join(dir, 'bin', 'gate-sh'))}).loadBundle(); process.stdout.write(r.cache + ' ' + typeof r.exports.main);`;
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

test('a cache from another build is never used: a rebuilt bundle of the same length, a foreign header', () => {
  const te = tempEnv();
  try {
    // one character of code changed, as a rebuild writes it (a new build id): V8 alone would accept the
    // old cache, it checks only the source's length
    const changed = copyAndLoad(join(te.dir, 'a'), (bundle) => {
      const s = readFileSync(bundle, 'utf8');
      const i = s.indexOf('(a gated GNU bash)');
      assert.ok(i > 0);
      const code = s.slice(s.indexOf('\n') + 1, i) + '(a gated GNU bosh)' + s.slice(i + 18);
      writeFileSync(bundle, `// gate-sh-build ${'f'.repeat(32)}\n` + code);
    });
    assert.equal(changed, 'none function');
    const foreign = copyAndLoad(join(te.dir, 'b'), (_bundle, cache) => {
      const buf = readFileSync(cache);
      writeFileSync(cache, Buffer.concat([Buffer.from('0123456789abcdef0123456789abcdef\n'), buf.subarray(buf.indexOf(10) + 1)]));
    });
    assert.equal(foreign, 'none function');
  } finally {
    te.cleanup();
  }
});

test('a cache V8 rejects (right header, damaged data) falls back to a normal compile', () => {
  const te = tempEnv();
  try {
    const out = copyAndLoad(te.dir, (_bundle, cache) => {
      const buf = readFileSync(cache);
      const nl = buf.indexOf(10);
      writeFileSync(cache, Buffer.concat([buf.subarray(0, nl + 1), Buffer.alloc(buf.length - nl - 1, 7)]));
    });
    assert.equal(out, 'rejected function');
  } finally {
    te.cleanup();
  }
});

test('the launcher runs gate-sh (its own process, not a module load)', () => {
  const r = spawnSync(process.execPath, [GATE_SH_NODE, '--version'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^gate-sh 0\.1\.0/);
});
