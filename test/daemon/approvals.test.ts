import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { approveConsole, preflight, runGate } from './helpers.js';

after(killAll);
import { approvalCall } from '../../src/client/approval-client.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

// approval_policy untrusted: every command needs a human (Codex §4.3), whatever the decider.
const UNTRUSTED = ['--approval-policy', 'untrusted', '--sandbox', 'danger-full-access'];

test('no approver attached: the prompt is denied at once with the message', async () => {
  const d = await startDaemon({ args: UNTRUSTED });
  try {
    const t0 = Date.now();
    const r = await preflight(d.paths, 'make build');
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(r.action.type, 'Deny');
    assert.equal(r.action.reason, "approval needed for 'make build' but no approver is attached (run 'gate approve')");
    assert.ok(r.subcommands[0].approval_id);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('a gate approve --json process answers; first answer wins across two consoles; session approvals are cached', async () => {
  const d = await startDaemon({ args: UNTRUSTED });
  const c1 = await approveConsole(d.te.env, 'one');
  const c2 = await approveConsole(d.te.env, 'two');
  try {
    const st = await approvalCall(d.paths, 'status');
    assert.deepEqual(((st.status as any).approvers as string[]).sort(), ['one', 'two']);
    const reply = preflight(d.paths, 'make test');
    const p1 = await c1.next('prompt');
    const p2 = await c2.next('prompt');
    assert.equal(p1.approval_id, p2.approval_id);
    assert.deepEqual(p1.command, ['make', 'test']);
    assert.equal(p1.cwd, '/tmp');
    assert.ok(Array.isArray(p1.available_decisions) && p1.available_decisions.includes('approved'));
    // the pending prompt is visible in status
    const st2 = await approvalCall(d.paths, 'status');
    assert.deepEqual(((st2.status as any).pending as any[]).map((p) => p.approval_id), [p1.approval_id]);
    c1.answer(p1.approval_id, 'approved');
    const a1 = await c1.next('answer');
    assert.equal(a1.ok, true);
    c2.answer(p1.approval_id, 'denied');
    const a2 = await c2.next('answer');
    assert.equal(a2.ok, false);
    assert.match(a2.error, /already answered \(by one\)/);
    const resolved = await c2.next('resolved');
    assert.equal(resolved.approver, 'one');
    const r = await reply;
    assert.equal(r.action.type, 'Run');
    assert.equal(r.subcommands[0].approval_id, p1.approval_id);

    // approved_for_session: asked once, then answered from the session cache
    const again = preflight(d.paths, 'make lint');
    const p3 = await c1.next('prompt');
    c1.answer(p3.approval_id, 'approved_for_session');
    assert.equal((await again).action.type, 'Run');
    const cached = await preflight(d.paths, 'make lint');
    assert.equal(cached.action.type, 'Run');
    assert.equal(cached.subcommands[0].source.at(-1).kind, 'session');
    // a different cwd is a different approval
    const other = preflight(d.paths, 'make lint', { cwd: '/' });
    const p4 = await c1.next('prompt');
    assert.equal(p4.cwd, '/');
    c2.answer(p4.approval_id, 'denied');
    const denied = await other;
    assert.deepEqual(denied.action, { type: 'Deny', reason: 'User denied execution' });

    // audit: one record per decision, with the approver and answer
    const audit = readFileSync(d.te.env.GATE_HOME + '/audit.jsonl', 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const decisions = audit.filter((a) => a.kind === 'decision');
    const SRC = 'heuristic:approval-policy';
    assert.deepEqual(
      decisions.map((a) => [a.answer ?? null, a.approver ?? null, a.source, a.action]),
      [
        ['approved', 'one', SRC, 'Run'],
        ['approved_for_session', 'one', SRC, 'Run'],
        [null, null, 'session', 'Run'],
        ['denied', 'two', SRC, 'Deny(User denied execution)'],
      ],
    );
  } finally {
    await c1.close();
    await c2.close();
    await d.stop();
    d.te.cleanup();
  }
});

test('timeout with an approver attached; gate approve --answer one-shot; the pending keepalive reaches the client', async () => {
  const d = await startDaemon({ args: [...UNTRUSTED, '--approval-timeout-ms', '400'] });
  const c = await approveConsole(d.te.env, 'slow');
  try {
    const timedOut = await preflight(d.paths, 'make slow');
    assert.equal(timedOut.action.type, 'Deny');
    assert.match(timedOut.action.reason, /^approval for 'make slow' timed out after 0.4 s$/);
    const first = await c.next('prompt');
    const resolved = await c.next('resolved');
    assert.equal(resolved.approval_id, first.approval_id);
    assert.equal(resolved.approver, 'daemon');
    assert.equal(resolved.note, 'timed out');

    await approvalCall(d.paths, 'config-set', { key: 'approval_timeout_ms', value: '20000' });
    let pendings = 0;
    const { request } = await import('../../src/transport/client.js');
    const reply = request(
      d.paths,
      { type: 'preflight', shell: 'bash', flag: '-c', script: 'make ok', cwd: '/tmp', pid: 1, sandbox_permissions: 'use_default' },
      { onPending: () => pendings++ },
    );
    const p = await c.next('prompt');
    // ~1 s keepalives while the human thinks: answered once two have come
    await waitFor(() => pendings >= 2, 'two pending keepalives', 10_000).catch(() => undefined);
    const one = await runGate(d.te.env, ['approve', '--answer', p.approval_id, 'approved']);
    assert.equal(one.code, 0, one.stderr);
    assert.equal((await reply as any).action.type, 'Run');
    assert.ok(pendings >= 2, `pending keepalives: ${pendings}`);
    const late = await runGate(d.te.env, ['approve', '--answer', p.approval_id, 'denied']);
    assert.equal(late.code, 1);
    assert.match(late.stderr, /already answered/);
    const bogus = await runGate(d.te.env, ['approve', '--answer', p.approval_id, 'maybe']);
    assert.equal(bogus.code, 2, 'misuse of gate: exit 2 (yargs)');
    assert.match(bogus.stderr, /^gate: approve: Invalid values:[\s\S]*Given: "maybe"/);
  } finally {
    await c.close();
    await d.stop();
    d.te.cleanup();
  }
});

test('a forbidden or denied subcommand withdraws the other prompts; the daemon stopping mid-prompt denies cleanly', async () => {
  const d = await startDaemon({ args: UNTRUSTED });
  const c = await approveConsole(d.te.env, 'x');
  try {
    const reply = preflight(d.paths, 'rm -rf /tmp/x');
    const p = await c.next('prompt');
    c.answer(p.approval_id, 'abort');
    assert.deepEqual((await reply).action, { type: 'Deny', reason: 'User cancelled execution' });
    // stop while a prompt is open: the client gets a denial before the sockets close, the audit log stays whole
    const open = preflight(d.paths, 'make deploy').catch((e: Error) => e);
    await c.next('prompt');
    await d.stop();
    const r = await open;
    assert.ok(!(r instanceof Error), String(r));
    assert.deepEqual((r as any).action, { type: 'Deny', reason: 'the gate daemon stopped before the approval was answered' });
    for (const line of readFileSync(d.te.env.GATE_HOME + '/audit.jsonl', 'utf8').trim().split('\n')) JSON.parse(line);
  } finally {
    await c.close();
    await d.stop();
    d.te.cleanup();
  }
});
