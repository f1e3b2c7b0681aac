/**
 * The on-failure rerun through `gate mcp` (calls run in the server's own process, issue 19): a call that
 * fails on a sandbox denial is offered to the approver as an escalation and rerun as approved, with
 * gate-sh's notice in the output between the two attempts; refused → the failure stands, nothing written.
 * Real daemon, real bwrap, a console approver.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { consoleRig } from '../sandbox/helpers.js';
import { mcpSession } from './helpers.js';

test('gate mcp: a sandbox denial is asked as an escalation and rerun as approved; a refusal keeps the failure', { timeout: 120_000 }, async (t) => {
  const { te, c, ws, outside } = await consoleRig(t);
  const m = await mcpSession(te.env, { elicitation: false });
  t.after(() => m.close());

  const attempt = async (target: string, answer: string) => {
    const ran = m.shell({ command: `echo before >&2; cp /etc/hostname ${target}`, workdir: ws, login: false });
    const p = await c.next('prompt');
    assert.equal(p.sandbox_permissions, 'require_escalated', 'the approver is asked for an escalation');
    c.answer(p.approval_id, answer);
    return ran;
  };

  const ok = await attempt(join(outside, 'f'), 'approved');
  assert.equal(ok.exit_code, 0, ok.output);
  assert.equal(readFileSync(join(outside, 'f'), 'utf8'), readFileSync('/etc/hostname', 'utf8'));
  assert.match(
    ok.output,
    /^before\ncp: .*Read-only file system\ngate-sh: the sandboxed run failed \(.*\); rerunning as approved \(outside the sandbox\)\nbefore\n$/,
  );

  const no = await attempt(join(outside, 'g'), 'denied');
  assert.notEqual(no.exit_code, 0);
  assert.ok(!existsSync(join(outside, 'g')));
  assert.match(no.output, /^before\ncp: .*Read-only file system\ngate-sh: .*not rerun/);

  // the same call where it is allowed to write (the workspace): no question, it runs once
  const inside = await m.shell({ command: `cp /etc/hostname ${join(ws, 'h')}`, workdir: ws });
  assert.equal(inside.exit_code, 0, inside.output);
  assert.equal(inside.output, '');
  assert.ok(existsSync(join(ws, 'h')));
});
