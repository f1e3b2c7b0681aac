/**
 * Issue 30, finding 2: an allow rule never escalates a program the sandbox wrote. The attack as reported:
 * with `git status` allowed, `cd /usr && ~/proj/git status` ran a workspace-written `git` outside the
 * sandbox (the writable folders were worked out from the exec's cwd, /usr, not the run's). Here the
 * workspace lies outside /tmp (as ~/proj does), the run writes `git` there, leaves it, and runs it by its
 * path; the fake git writes a mark in a folder no sandbox may write. In workspace-write and
 * danger-full-access it is asked about (no approver: denied, no mark, not escalated in the audit); with an
 * approver it runs when approved; the system's git is still escalated by the rule without a prompt.
 * Real daemon, real gate-sh, real bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execGateOptions, gateSh } from '../exec-gate/helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

const RULES = ['prefix_rule(pattern=["git", "status"], decision="allow")'];

/** The workspace (outside every world-writable folder, as a home folder is) and the folder of the mark. */
function places(): { ws: string; mark: string } {
  const ws = mkdtempSync('/var/lib/gate-sh-test-ws-');
  const mark = mkdtempSync('/var/lib/gate-sh-test-mark-');
  process.on('exit', () => (rmSync(ws, { recursive: true, force: true }), rmSync(mark, { recursive: true, force: true })));
  return { ws, mark };
}

const attack = (ws: string, mark: string) =>
  `printf '#!/bin/sh\\necho escaped > ${mark}/out\\n' > git; chmod +x git; cd /usr && ${ws}/git status; echo "status=$?"`;

/** The exec records of the workspace git in the audit log. */
function records(auditLog: string, ws: string): Record<string, unknown>[] {
  return readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"kind":"exec"'))
    .map((l) => JSON.parse(l))
    .filter((r) => Array.isArray(r.argv) && r.argv[0] === `${ws}/git`);
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`escalate-writable, ${mode}: cd /usr && <workspace>/git status is never escalated by the git rule`, async (t) => {
    t.after(killAll);
    const rig = await startDaemon(execGateOptions({ rules: RULES, env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => rig.close());
    const { ws, mark } = places();
    const r = await gateSh(rig, attack(ws, mark), { cwd: ws, timeoutMs: 60_000 });
    assert.equal(existsSync(join(mark, 'out')), false, `the workspace git ran outside the sandbox: ${r.stdout}${r.stderr}`);
    const recs = records(rig.paths.auditLog, ws);
    assert.ok(recs.length > 0, 'the exec was decided');
    for (const rec of recs) assert.doesNotMatch(String(rec.action), /^Escalate/, JSON.stringify(rec));
    // a later run of the session started in another folder: the git an earlier run wrote is still suspect
    const other = places().ws;
    const later = await gateSh(rig, `cd /usr && ${ws}/git status; echo "status=$?"`, { cwd: other, timeoutMs: 60_000 });
    assert.equal(existsSync(join(mark, 'out')), false, `a later run escalated the workspace git: ${later.stdout}${later.stderr}`);
    // the system's git under the same rule still leaves the sandbox, without a prompt
    const sys = await gateSh(rig, `cd /usr && git status >/dev/null 2>&1; echo "status=$?"`, { cwd: ws, timeoutMs: 60_000 });
    assert.doesNotMatch(sys.stderr, /gate-sh:/, sys.stderr);
    const esc = readFileSync(rig.paths.auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"exec"') && /"argv":\["[^"]*\/git","status"\]/.test(l) && !l.includes(ws));
    assert.ok(
      esc.some((l) => /"action":"Escalate/.test(l)),
      esc.join('\n') || 'no exec record of the system git',
    );
  });
}

test('escalate-writable, workspace-write: the workspace git runs in the sandbox, unasked, and writes nothing outside it', async (t) => {
  t.after(killAll);
  const rig = await startDaemon(execGateOptions({ rules: RULES, autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  t.after(() => rig.close());
  const { ws, mark } = places();
  const r = await gateSh(rig, attack(ws, mark), { cwd: ws, timeoutMs: 60_000 });
  // it ran (its own output), in the sandbox: the folder outside is read-only to it
  assert.match(r.stderr, /Read-only file system/, r.stderr);
  assert.equal(existsSync(join(mark, 'out')), false);
  // no person was asked to let it out: an approval is no way out either
  assert.ok(!rig.prompts.some((p) => JSON.stringify(p).includes(`${ws}/git`)), JSON.stringify(rig.prompts));
});
