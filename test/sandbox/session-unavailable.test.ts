// Session sandboxes where the namespaces cannot be made (a non-root user without user namespaces of the
// holder's: docs/sandbox.md): the real holder, run as `nobody` through setpriv, fails with EPERM; the
// daemon's registry then says so once and answers every join with null (each run makes its own sandbox),
// without starting a holder per run. Skipped when not root or without setpriv.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { AuditLog } from '../../src/daemon/audit.js';
import { SessionSandboxes } from '../../src/daemon/session-sandbox.js';

function hasSetpriv(): boolean {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('no namespaces for this user: logged once, every join answers null, no holder per run', { skip: process.getuid?.() !== 0 || !hasSetpriv() }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gate-unavail-'));
  const starts = join(dir, 'starts');
  const holder = join(dir, 'holder-as-nobody');
  // the real holder, as a user without the privilege to make the namespaces
  writeFileSync(holder, `#!/bin/sh\necho x >> ${starts}\nexec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all ${join(ROOT, 'shims', 'gate-session')} "$@"\n`);
  chmodSync(holder, 0o755);
  const audit = new AuditLog(join(dir, 'audit.jsonl'), 'default');
  const log: string[] = [];
  const s = new SessionSandboxes({ holder, bwrap: () => '/usr/bin/bwrap', audit, log: (l) => log.push(l) });
  try {
    const key = 'a'.repeat(64);
    assert.equal(await s.join(key, true), null);
    assert.equal(await s.join(key, true), null);
    assert.equal(await s.join('b'.repeat(64), false), null);
    assert.equal(readFileSync(starts, 'utf8'), 'x\n', 'one holder tried, not one per run');
    assert.equal(log.length, 1);
    assert.match(log[0], /^session sandbox not made: cannot make the pid and network namespaces: Operation not permitted; every run gets a sandbox of its own$/);
    assert.match(String(s.status().unavailable), /Operation not permitted/);
  } finally {
    s.stopAll();
    audit.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
