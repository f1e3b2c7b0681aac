// A caller asks per call: `gate-sh --escalate --justification W` (outside the turn sandbox) or
// `--with-permissions JSON` (exactly those permissions). The approver sees what is asked and why; an
// approval runs it that way, a denial runs nothing; bad asks are refused before anything runs.
// `--sandbox MODE|JSON` narrows one call's sandbox (a host's own, as gate mcp passes Codex's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gateSh, run } from '../shell/helpers.js';
import { GATE_SH, GATE_SH_NODE } from '../helpers/env.js';
import { consoleRig } from './helpers.js';
import { escalationFields, EscalationArgsError } from '../../src/exec/escalation-args.js';

test('escalation args: fields, paths against the cwd, and refusals', () => {
  assert.deepEqual(escalationFields({}, '/w', '/h'), { sandbox_permissions: 'use_default' });
  assert.deepEqual(escalationFields({ escalate: true, justification: 'needs /var' }, '/w', '/h'), {
    sandbox_permissions: 'require_escalated',
    justification: 'needs /var',
  });
  assert.deepEqual(escalationFields({ withPermissions: '{"file_system":{"read":[".","~/x"],"write":["out/","../y"]}}' }, '/w/a', '/h'), {
    sandbox_permissions: 'with_additional_permissions',
    additional_permissions: { network: false, file_system: { read: ['/w/a', '/h/x'], write: ['/w/a/out', '/w/y'] } },
  });
  for (const [a, re] of [
    [{ withPermissions: '{"file_system":{"write":["/"]}}' }, /write access to '\/'/],
    [{ withPermissions: '{"file_system":{"write":"/tmp"}}' }, /must be a list of paths/],
    [{ withPermissions: '{"net":true}' }, /unknown key 'net'/],
    [{ withPermissions: 'nope' }, /not JSON/],
    [{ escalate: true, withPermissions: '{}' }, /exclude each other/],
    [{ justification: 'why' }, /goes with --escalate/],
  ] as const)
    assert.throws(() => escalationFields(a, '/w', '/h'), (e: Error) => e instanceof EscalationArgsError && re.test(e.message), JSON.stringify(a));
});

test('gate-sh --escalate and --with-permissions: the prompt says what is asked and why; run as approved', async (t) => {
  const { te, c, ws, outside } = await consoleRig(t, 'approval_timeout_ms = 15000\n');
  const other = join(te.dir, 'other');
  mkdirSync(other);

  // without asking: the turn sandbox (heuristics allow touch); its denial is offered as a rerun, refused here
  const plainRun = gateSh(['-c', `touch ${outside}/plain`], { env: te.env, cwd: ws });
  const p0 = await c.next('prompt');
  assert.match(p0.reason, /^the sandboxed run failed/);
  c.answer(p0.approval_id, 'denied');
  const plain = await plainRun;
  assert.notEqual(plain.code, 0);
  assert.ok(!existsSync(join(outside, 'plain')));

  const esc = gateSh(['--escalate', '--justification', 'write the report outside', '-c', `touch ${outside}/esc`], { env: te.env, cwd: ws });
  const p1 = await c.next('prompt');
  assert.equal(p1.sandbox_permissions, 'require_escalated');
  assert.equal(p1.reason, 'write the report outside');
  c.answer(p1.approval_id, 'approved');
  const r1 = await esc;
  assert.equal(r1.code, 0, r1.stderr.toString());
  assert.ok(existsSync(join(outside, 'esc')), 'approved: ran outside the sandbox');

  const denied = gateSh(['--escalate', '-c', `touch ${outside}/no`], { env: te.env, cwd: ws });
  const p2 = await c.next('prompt');
  c.answer(p2.approval_id, 'denied');
  const r2 = await denied;
  assert.equal(r2.code, 126);
  assert.match(r2.stderr.toString(), /^gate-sh: denied: touch .*\/no: /m);
  assert.ok(!existsSync(join(outside, 'no')));

  const profile = JSON.stringify({ file_system: { write: [outside] } });
  const perm = gateSh(['--with-permissions', profile, '-c', `touch ${outside}/perm ${other}/perm`], { env: te.env, cwd: ws });
  const p3 = await c.next('prompt');
  assert.equal(p3.sandbox_permissions, 'with_additional_permissions');
  assert.deepEqual(p3.requested_permissions?.file_system?.write, [outside]);
  c.answer(p3.approval_id, 'approved');
  const r3 = await perm;
  assert.equal(r3.code, 1, r3.stderr.toString());
  assert.match(r3.stderr.toString(), /touch: cannot touch '.*\/other\/perm': Read-only file system/);
  assert.ok(existsSync(join(outside, 'perm')), 'the declared path is writable');
  assert.ok(!existsSync(join(other, 'perm')), 'nothing wider than asked');
  assert.equal(c.events.filter((e) => e.type === 'prompt').length, 4, 'an explicit-permissions run is not offered a rerun outside');

  const bad = await gateSh(['--with-permissions', '{"file_system":{"write":["/"]}}', '-c', `touch ${outside}/bad`], { env: te.env, cwd: ws });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr.toString(), /^gate-sh: --with-permissions: write access to '\/' is not a sandbox.*nothing ran/m);
  assert.ok(!existsSync(join(outside, 'bad')));
});

test('gate-sh --sandbox: this call runs in the stricter of what it asks and the session\'s; the next call and other clients keep the session\'s', async (t) => {
  const { te, c, ws } = await consoleRig(t, 'approval_timeout_ms = 15000\n');
  const sub = join(ws, 'sub');
  mkdirSync(sub);
  for (const [entry, bin] of [
    ['native', GATE_SH],
    ['node', GATE_SH_NODE],
  ] as const) {
    // read-only for this call: its write fails; the failure is offered as a rerun (a person decides), refused here
    const ro = run(bin, ['--sandbox', 'read-only', '-c', `touch ${ws}/ro-${entry}`], { env: te.env, cwd: ws });
    const p = await c.next('prompt');
    assert.match(p.reason, /^the sandboxed run failed/, entry);
    c.answer(p.approval_id, 'denied');
    const r = await ro;
    assert.notEqual(r.code, 0, entry);
    assert.match(r.stderr.toString(), /Read-only file system/, entry);
    assert.ok(!existsSync(join(ws, `ro-${entry}`)), `${entry}: nothing written under --sandbox read-only`);
    // the same write without it: the session's workspace-write
    const plain = await run(bin, ['-c', `touch ${ws}/plain-${entry}`], { env: te.env, cwd: ws });
    assert.equal(plain.code, 0, `${entry}: ${plain.stderr}`);
    assert.ok(existsSync(join(ws, `plain-${entry}`)));
    // workspace-write with fewer roots: only `sub` (relative: against the cwd) and the run's own folder
    const roots = await run(bin, ['--sandbox', '{"type":"workspace-write","writable_roots":["sub"]}', '-c', `touch sub/in-${entry}`], { env: te.env, cwd: ws });
    assert.equal(roots.code, 0, `${entry}: ${roots.stderr}`);
    assert.ok(existsSync(join(sub, `in-${entry}`)));
    // asking for more than the session's never widens it: danger-full-access stays workspace-write
    const wide = run(bin, ['--sandbox', 'danger-full-access', '-c', `touch ${te.dir}/outside/wide-${entry}`], { env: te.env, cwd: ws });
    const pw = await c.next('prompt');
    c.answer(pw.approval_id, 'denied');
    assert.notEqual((await wide).code, 0);
    assert.ok(!existsSync(join(te.dir, 'outside', `wide-${entry}`)), `${entry}: --sandbox danger-full-access did not widen the session's`);
    // a policy that cannot be read: nothing runs, and the flag is named
    const bad = await run(bin, ['--sandbox', 'bogus', '-c', `touch ${ws}/bad-${entry}`], { env: te.env, cwd: ws });
    assert.equal(bad.code, 2, `${entry}: ${bad.stderr}`);
    assert.match(bad.stderr.toString(), /gate-sh: .*--sandbox: invalid sandbox policy 'bogus'/);
    assert.ok(!existsSync(join(ws, `bad-${entry}`)));
  }
});
