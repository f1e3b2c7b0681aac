// The on-failure rerun through gate-sh itself: a script that fails on a sandbox denial is offered to the
// approver as an escalation and rerun as approved (notice on stderr); denied → the failure stands; stderr
// reaches the caller byte for byte either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gateSh, run } from '../shell/helpers.js';
import { consoleRig } from './helpers.js';
import { GATE_SH } from '../helpers/env.js';

test('gate-sh: a sandbox denial is asked as an escalation and rerun as approved; a refusal keeps the failure', async (t) => {
  const { te, c, ws, outside } = await consoleRig(t);

  async function attempt(target: string, answer: string) {
    const script = `echo before >&2; cp /etc/hostname ${target}`;
    const ran = gateSh(['-c', script], { env: te.env, cwd: ws });
    // the first attempt runs sandboxed (heuristics allow cp: no prompt); then the rerun question
    const p = await c.next('prompt');
    assert.equal(p.sandbox_permissions, 'require_escalated', 'the approver is asked for an escalation');
    c.answer(p.approval_id, answer);
    return ran;
  }

  const ok = await attempt(join(outside, 'f'), 'approved');
  const okErr = ok.stderr.toString();
  assert.equal(ok.code, 0, okErr);
  assert.equal(readFileSync(join(outside, 'f'), 'utf8'), readFileSync('/etc/hostname', 'utf8'));
  assert.match(okErr, /^before\ncp: .*Read-only file system\n/, 'the first attempt\'s stderr arrives unchanged');
  assert.match(okErr, /gate-sh: the sandboxed run failed \(.*\); rerunning as approved \(outside the sandbox\)\nbefore\n$/);

  const no = await attempt(join(outside, 'g'), 'denied');
  assert.notEqual(no.code, 0);
  assert.ok(!existsSync(join(outside, 'g')));
  assert.match(no.stderr.toString(), /not rerun/);

  // stderr is stdout (`2>&1 | reader`, the usual agent setup): offered as well, and what the reader gets is
  // exactly bash's interleaving of both
  const merged = (script: string) => run('/bin/sh', ['-c', 'exec "$@" 2>&1', 'sh', GATE_SH, '-c', script], { env: te.env, cwd: ws });
  const m = merged(`echo one; echo two >&2; echo three; cp /etc/hostname ${join(outside, 'm')}`);
  const pm = await c.next('prompt');
  assert.equal(pm.sandbox_permissions, 'require_escalated');
  c.answer(pm.approval_id, 'approved');
  const mr = await m;
  assert.equal(mr.code, 0, mr.stdout.toString());
  assert.match(
    mr.stdout.toString(),
    /^one\ntwo\nthree\ncp: .*Read-only file system\n(?:gate-sh: waiting for approval[^\n]*\n)?gate-sh: the sandboxed run failed .*rerunning as approved \(outside the sandbox\)\none\ntwo\nthree\n$/,
  );
  assert.ok(existsSync(join(outside, 'm')));
  // the reader goes away (`| head -1`): the script meets EPIPE/SIGPIPE as under bash, and ends
  const yes = await run('/bin/sh', ['-c', '"$@" 2>&1 | head -n 1', 'sh', GATE_SH, '-c', 'yes'], { env: te.env, cwd: ws });
  assert.equal(yes.code, 0);
  assert.equal(yes.stdout.toString(), 'y\n');
});
