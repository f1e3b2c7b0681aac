// A session sandbox with nothing running in it ends after the idle time (src/daemon/session-sandbox.ts):
// the real holder, started by the registry as the daemon starts it, with a short idle time. Root only (the
// holder makes pid and network namespaces).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { waitFor } from '../helpers/daemon.js';
import { AuditLog } from '../../src/daemon/audit.js';
import { SessionSandboxes } from '../../src/daemon/session-sandbox.js';

test('an idle session sandbox ends, its holder with it; a join after that makes a new one', { skip: process.getuid?.() !== 0 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gate-idle-'));
  const audit = new AuditLog(join(dir, 'audit.jsonl'), 'default');
  const s = new SessionSandboxes({ holder: join(ROOT, 'shims', 'gate-session'), bwrap: () => '/usr/bin/bwrap', audit, log: () => {}, idleMs: 300 });
  try {
    const key = 'c'.repeat(64);
    const a = await s.join(key, true);
    assert.ok(a && a.pid > 0 && a.pidns > 0 && a.netns > 0);
    assert.equal(statSync(`/proc/${a.pid}/ns/net`).ino, a.netns);
    assert.deepEqual(await s.join(key, true), a, 'the same sandbox while it lives');
    await waitFor(() => s.status().sandboxes.length === 0 || undefined, 'the idle sandbox to end', 10_000);
    await waitFor(() => {
      try {
        return statSync(`/proc/${a.pid}/ns/pid`).ino !== a.pidns || undefined;
      } catch {
        return true;
      }
    }, 'its holder to be gone');
    const b = await s.join(key, true);
    // a namespace's inode number is free for reuse once the namespace is gone (the kernel hands out the
    // lowest free one), so the new sandbox is told by its holder and by the audit log
    assert.ok(b, 'a new sandbox');
    assert.notEqual(b.pid, a.pid, 'a new holder');
    assert.equal(statSync(`/proc/${b.pid}/ns/pid`).ino, b.pidns, 'its holder lives');
    audit.flush();
    const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    assert.match(log, /session sandbox c{12} ended: nothing ran in it for 0 s/);
    assert.equal(log.match(/session sandbox c{12} made:/g)?.length, 2, log);
  } finally {
    s.stopAll();
    audit.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
