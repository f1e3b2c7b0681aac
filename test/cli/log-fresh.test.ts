/**
 * `gate log` on a fresh install, before anything was decided: an empty log, said on stderr, exit 0 (it
 * failed with 'cannot read the audit log: ENOENT', exit 1, the first thing a new user trying the docs'
 * `gate log` commands saw). An audit log that cannot be read for another reason is still an error. No daemon.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, tempEnv } from '../helpers/env.js';

test('gate log with no audit log yet: nothing, said so, exit 0; an unreadable one: exit 1', () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const r = spawnSync(process.execPath, [GATE, 'log', '--kind', 'network', '--decision', 'deny'], { env: te.env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^gate: log: no audit log at .*audit\.jsonl yet/);
    // a folder where the log should be: not a fresh install, an error
    const dir = join(te.dir, 'log-is-a-folder');
    mkdirSync(dir);
    const bad = spawnSync(process.execPath, [GATE, 'log', '--file', dir], { env: te.env, encoding: 'utf8' });
    assert.equal(bad.status, 1, bad.stderr);
    assert.match(bad.stderr, /^gate: cannot read the audit log /);
  } finally {
    te.cleanup();
  }
});
