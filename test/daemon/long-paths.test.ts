// A runtime folder too long for sun_path (107 bytes): every entry point says so and binds nothing —
// never a socket at a cut-off path outside the 0700 folder, never a half-started daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH, tempEnv } from '../helpers/env.js';
import { checkSocketPaths, gatePaths } from '../../src/paths/paths.js';

test('socket paths over 107 bytes: gate-sh, gate daemon start and run refuse clearly; nothing is bound', () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '0' });
  try {
    const long = join(te.dir, 'a'.repeat(60), 'b'.repeat(40));
    mkdirSync(long, { recursive: true, mode: 0o700 });
    const env = { ...te.env, XDG_RUNTIME_DIR: long };
    assert.throws(() => checkSocketPaths(gatePaths(env)), /^Error: socket path too long \(\d+ > 107 bytes\)/);
    for (const [cmd, args, code] of [
      [GATE_SH, ['-c', 'echo ran'], 126],
      [GATE, ['daemon', 'start'], 1],
      [GATE, ['daemon', 'run'], 1],
    ] as const) {
      const r =
        cmd === GATE_SH
          ? spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 30_000 })
          : spawnSync(process.execPath, [cmd, ...args], { env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing ran');
      assert.match(r.stderr, /^gate(-sh)?: socket path too long \(\d+ > 107 bytes\): .*; set XDG_RUNTIME_DIR to a shorter folder/m, args.join(' '));
      assert.doesNotMatch(r.stderr, /gate(-sh)?: gate(-sh)?:/);
    }
    // nothing bound anywhere: not in the runtime folder, not at a truncated path beside it
    const sockets = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sockets(join(dir, e.name)) : e.isSocket() ? [join(dir, e.name)] : []));
    assert.deepEqual(sockets(te.dir), []);
    assert.ok(!existsSync(join(long, 'gate-sh', 'default', 'daemon.pid')));
    const bad = spawnSync(process.execPath, [GATE, 'daemon', 'status'], { env: { ...te.env, GATE_SESSION: 'bad/x' }, encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /^gate: invalid GATE_SESSION 'bad\/x'/);
    assert.doesNotMatch(bad.stderr, /gate(-sh)?: gate(-sh)?:/);
  } finally {
    te.cleanup();
  }
});
