/** gate-sh against a real daemon: fail closed, prompts, approvals from a real `gate approve`, autostart. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { approveConsole, runGate } from '../daemon/helpers.js';
import { gateSh, run } from './helpers.js';
import { startDaemon, waitFor } from '../helpers/daemon.js';

const FULL = { GATE_SANDBOX_MODE: 'danger-full-access' };

test('no daemon and autostart off: exit 126, nothing ran, the message says what to do', { timeout: 60_000 }, async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const marker = join(te.dir, 'ran');
    const r = await gateSh(['-c', `touch ${marker}`], { env: te.env });
    assert.equal(r.code, 126);
    assert.match(r.stderr.toString(), /^gate-sh: .*not running.*'gate daemon start'.*nothing ran\n$/s);
    assert.equal(existsSync(marker), false);
  } finally {
    te.cleanup();
  }
});

test('inside a gated run (GATE_RUN set) gate-sh never starts a daemon from the environment it was given', { timeout: 60_000 }, async () => {
  const te = tempEnv({ ...FULL, GATE_APPROVAL_POLICY: 'never', GATE_RUN: 'r-outer' });
  try {
    const marker = join(te.dir, 'ran');
    const r = await gateSh(['-c', `touch ${marker}`], { env: te.env });
    assert.equal(r.code, 126);
    assert.match(r.stderr.toString(), /does not start one from inside a gated run.*nothing ran\n$/);
    assert.equal(existsSync(marker), false);
    assert.equal(existsSync(join(te.env.XDG_RUNTIME_DIR, 'gate-sh', 'default', 'daemon.pid')), false, 'no daemon was started');
  } finally {
    te.cleanup();
  }
});

test('no daemon: gate-sh starts one in the background and runs the script; the run is audited', { timeout: 60_000 }, async () => {
  const te = tempEnv(FULL);
  try {
    const r = await gateSh(['-c', 'echo "hello $0 $1"; exit 3', 'me', 'one'], { env: te.env });
    assert.equal(r.stderr.toString(), '');
    assert.equal(r.stdout.toString(), 'hello me one\n');
    assert.equal(r.code, 3);
    // run-finished is fire-and-forget: wait for the record to land
    const rec = await waitFor(() => {
      const log = join(te.env.GATE_HOME, 'audit.jsonl');
      if (!existsSync(log)) return undefined;
      const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      return lines.find((l) => l.kind === 'run' || l.exit_status !== undefined);
    }, 'the run record');
    assert.equal(rec.exit_status, 3);
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});

test('untrusted with no approver: denied at once with the "no approver is attached" message, nothing ran', { timeout: 60_000 }, async () => {
  const d = await startDaemon({ env: FULL, args: ['--approval-policy', 'untrusted'] });
  try {
    const marker = join(d.te.dir, 'ran');
    const r = await gateSh(['-c', `touch ${marker}`], { env: d.te.env });
    assert.equal(r.code, 126);
    const err = r.stderr.toString();
    assert.equal(err, `gate-sh: approval needed for 'touch ${marker}' but no approver is attached (run 'gate approve')\n`);
    assert.equal(existsSync(marker), false);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('a prompt answered by a real gate approve --json process: approved runs once, denied does not run', { timeout: 60_000 }, async () => {
  const d = await startDaemon({ env: FULL, args: ['--approval-policy', 'untrusted'] });
  const c = await approveConsole(d.te.env, 'human');
  try {
    const marker = join(d.te.dir, 'count');
    const script = `echo ran >> ${marker}; echo done`;
    const running = gateSh(['-c', script], { env: d.te.env });
    const p = await c.next('prompt');
    assert.deepEqual(p.command.slice(-1), [script]);
    assert.equal(existsSync(marker), false, 'nothing runs before the answer');
    c.answer(p.approval_id, 'approved');
    const r = await running;
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), 'done\n');
    assert.equal(readFileSync(marker, 'utf8'), 'ran\n');

    const denied = gateSh(['-c', `echo again >> ${marker}`], { env: d.te.env });
    const p2 = await c.next('prompt');
    c.answer(p2.approval_id, 'denied');
    const r2 = await denied;
    assert.equal(r2.code, 126);
    assert.match(r2.stderr.toString(), /gate-sh: denied: .*: User denied execution\n$/);
    assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
  } finally {
    await c.close();
    await d.stop();
    d.te.cleanup();
  }
});

test('daemon killed mid-prompt: gate-sh exits 126 promptly with a clear message, nothing ran', { timeout: 60_000 }, async () => {
  const d = await startDaemon({ env: FULL, args: ['--approval-policy', 'untrusted'] });
  const c = await approveConsole(d.te.env, 'slow');
  try {
    const marker = join(d.te.dir, 'ran');
    const running = gateSh(['-c', `touch ${marker}`], { env: { ...d.te.env, GATE_NO_AUTOSTART: '1' } });
    await c.next('prompt');
    const t0 = Date.now();
    d.child.kill('SIGKILL');
    const r = await running;
    const ms = Date.now() - t0;
    assert.equal(r.code, 126);
    assert.match(
      r.stderr.toString(),
      /gate-sh: the gate daemon stopped (while an approval was pending|before answering); .*'gate daemon start'.*; nothing ran\n$/,
    );
    assert.ok(ms < 3000, `exited ${ms} ms after the daemon died`);
    assert.equal(existsSync(marker), false);
  } finally {
    await c.close();
    await d.stop();
    d.te.cleanup();
  }
});

test('the current folder removed before gate-sh starts: exit 126, a message that says so, nothing ran', { timeout: 60_000 }, async () => {
  const te = tempEnv(FULL);
  try {
    const gone = join(te.dir, 'gone');
    const q = (x: string): string => `'${x.replace(/'/g, "'\\''")}'`;
    // bash stays in the removed folder and starts gate-sh there; the same script in a folder that exists runs
    const script = (rm: boolean): string => `mkdir -p ${q(gone)} && cd ${q(gone)} && ${rm ? `rmdir ${q(gone)} && ` : ''}exec ${q(GATE_SH)} -c 'echo ran'`;
    const r = await run('/bin/bash', ['-c', script(true)], { env: te.env });
    assert.equal(r.stdout.toString(), '');
    assert.equal(r.stderr.toString(), 'gate-sh: the current folder cannot be read (ENOENT: removed, or out of reach); nothing ran\n');
    assert.equal(r.code, 126);
    const ok = await run('/bin/bash', ['-c', script(false)], { env: te.env });
    assert.equal(ok.stdout.toString(), 'ran\n', ok.stderr.toString());
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});
