// The sanitizer build's runtime before libgate.so (src/exec/preload-first.ts, withPreload, the escalation's
// environment): read only from the shims folder's own file, only a plain absolute path of a file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withPreload } from '../../../src/exec/exec-gate.js';
import { PRELOAD_FIRST_FILE, preloadFirst } from '../../../src/exec/preload-first.js';
import { escalationEnv } from '../../../src/daemon/escalation-env.js';

test('preloadFirst: the file beside libgate.so names an existing file by an absolute path, or nothing is preloaded first', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gate-preload-first-'));
  try {
    const runtime = join(dir, 'libasan.so');
    writeFileSync(runtime, '');
    assert.equal(preloadFirst(dir), undefined, 'no file: the installed build');
    writeFileSync(join(dir, PRELOAD_FIRST_FILE), `${runtime}\n`);
    assert.equal(preloadFirst(dir), runtime);
    for (const bad of ['libasan.so', `${runtime}:/evil.so`, `${runtime} /evil.so`, join(dir, 'missing.so'), dir]) {
      writeFileSync(join(dir, PRELOAD_FIRST_FILE), bad);
      assert.equal(preloadFirst(dir), undefined, bad);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('withPreload: the runtime first, libgate.so second, each once, the caller entries after', () => {
  assert.equal(withPreload('/x.so:/rt.so:/l.so:/y.so', '/l.so', '/rt.so'), '/rt.so:/l.so:/x.so:/y.so');
  assert.equal(withPreload('/rt.so:/l.so', '/l.so', '/rt.so'), '/rt.so:/l.so');
  assert.equal(withPreload('/x.so', '/l.so', undefined), '/l.so:/x.so');
});

test("escalationEnv: the runtime is the gate's own entry, not the caller's", () => {
  const { env, corrected } = escalationEnv({ sent: ['LD_PRELOAD=/rt.so:/l.so'], lib: '/l.so', libFirst: '/rt.so', fallbackPath: '/bin' });
  assert.equal(env.LD_PRELOAD, undefined);
  assert.deepEqual(corrected, []);
  const foreign = escalationEnv({ sent: ['LD_PRELOAD=/rt.so:/l.so:/x.so'], decided: { LD_PRELOAD: '/x.so' }, lib: '/l.so', libFirst: '/rt.so', fallbackPath: '/bin' });
  assert.equal(foreign.env.LD_PRELOAD, '/x.so');
  assert.deepEqual(foreign.corrected, []);
});
