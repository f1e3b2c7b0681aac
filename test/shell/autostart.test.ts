/**
 * The native gate-sh's own autostart (issue 19, cold start): with no daemon it starts `gate daemon run`
 * itself, as the Node gate-sh would, and runs the script against it. The started daemon holds none of the
 * caller's descriptors (a pipe the caller passed on ends when gate-sh does). Whatever names autostart
 * (config.toml, GATE_AUTOSTART, GATE_NO_AUTOSTART) is left to the Node gate-sh: autostart = false starts
 * nothing and says so. Real daemons, real sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { runGate } from '../daemon/helpers.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { gatePaths } from '../../src/paths/paths.js';
import { gateSh } from './helpers.js';

const FULL = { GATE_SANDBOX_MODE: 'danger-full-access' };

test('no daemon: the native gate-sh starts one itself and runs; the daemon keeps no descriptor of the caller; autostart = false starts none', { timeout: 90_000 }, async () => {
  const te = tempEnv(FULL);
  try {
    // fd 3: a pipe the caller passes on; the call ends only when every holder of its pipes lets go, so a
    // daemon that kept one would hold this call open
    const r = await gateSh(['-c', 'echo "started $0"', 'me'], { env: te.env, cwd: te.dir, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    assert.equal(r.stderr.toString(), '');
    assert.equal(r.stdout.toString(), 'started me\n');
    assert.equal(r.code, 0);
    const info = await pingDaemon(gatePaths(te.env), 2000);
    assert.ok(info, 'a daemon answers');
    const log = readFileSync(join(gatePaths(te.env).sessionDir, 'daemon.log'), 'utf8');
    assert.match(log, new RegExp(`gate daemon ${String(info.pid)} ready`));
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }

  const off = tempEnv(FULL);
  try {
    mkdirSync(off.env.GATE_HOME, { recursive: true });
    writeFileSync(join(off.env.GATE_HOME, 'config.toml'), 'autostart = false\n');
    const marker = join(off.dir, 'ran');
    const r = await gateSh(['-c', `touch ${marker}`], { env: off.env, cwd: off.dir });
    assert.equal(r.code, 126);
    assert.match(r.stderr.toString(), /^gate-sh: .*autostart = false.*nothing ran\n$/s);
    assert.equal(existsSync(marker), false);
    assert.equal(await pingDaemon(gatePaths(off.env), 500), undefined);
  } finally {
    off.cleanup();
  }
});

