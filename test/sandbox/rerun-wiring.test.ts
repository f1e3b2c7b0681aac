/**
 * The on-failure rerun does not depend on how the caller wired stdout and stderr (issue 31 point 2):
 * Claude Code gives its shell one file for both, and `git commit` in the sandbox then ended with
 * "index.lock: Read-only file system" and no gate-sh notice nor rerun offer, while `2>&1 | cat` had both.
 * Here `> f 2>&1`, `>> f 2>&1` and `> /dev/null 2>&1` each get the offer (a prompt asking to escalate),
 * and the file gets the failure, the notice and the rerun's output in bash's order. Real daemon, real
 * bwrap, real bash; the caller's shell is /bin/sh doing the redirection, as an agent's does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../shell/helpers.js';
import { consoleRig } from './helpers.js';
import { GATE_SH } from '../helpers/env.js';

test('gate-sh: `> f 2>&1`, `>> f 2>&1` and `>/dev/null 2>&1` are offered the rerun as `2>&1 | cat` is', async (t) => {
  const { te, c, ws, outside } = await consoleRig(t);
  const wired = (redirect: string, script: string) =>
    run('/bin/sh', ['-c', `"$@" ${redirect}`, 'sh', GATE_SH, '-c', script], { env: te.env, cwd: ws });

  for (const [i, redirect] of ['> out.txt 2>&1', '>> out.txt 2>&1'].entries()) {
    const target = join(outside, `f${i}`);
    writeFileSync(join(ws, 'out.txt'), i === 1 ? 'kept\n' : 'truncated\n');
    const ran = wired(redirect, `echo one; echo two >&2; cp /etc/hostname ${target}`);
    const p = await c.next('prompt').catch(async (e) => {
      const r = await ran;
      throw new Error(`${redirect}: ${(e as Error).message}; exit ${r.code}; out.txt: ${readFileSync(join(ws, 'out.txt'), 'utf8')}`);
    });
    assert.equal(p.sandbox_permissions, 'require_escalated', `${redirect}: the approver is asked for an escalation`);
    c.answer(p.approval_id, 'approved');
    const r = await ran;
    assert.equal(r.code, 0, readFileSync(join(ws, 'out.txt'), 'utf8'));
    assert.equal(readFileSync(target, 'utf8'), readFileSync('/etc/hostname', 'utf8'));
    // "waiting for approval" is said once the approver has taken 300 ms (a loaded machine)
    assert.match(
      readFileSync(join(ws, 'out.txt'), 'utf8'),
      new RegExp(
        `^${i === 1 ? 'kept\\n' : ''}one\\ntwo\\ncp: .*Read-only file system\\n(?:gate-sh: waiting for approval[^\\n]*\\n)?gate-sh: the sandboxed run failed \\(read-only file system in the sandbox: cp: .*\\); rerunning as approved \\(outside the sandbox\\)\\none\\ntwo\\n$`,
      ),
    );
  }

  // /dev/null for both: the offer too; refused, the failure stands and nothing reruns
  const target = join(outside, 'n');
  const ran = wired('> /dev/null 2>&1', `cp /etc/hostname ${target}`);
  const p = await c.next('prompt');
  assert.equal(p.sandbox_permissions, 'require_escalated');
  c.answer(p.approval_id, 'denied');
  const r = await ran;
  assert.notEqual(r.code, 0);
  assert.equal(existsSync(target), false);
  assert.equal(r.stdout.length + r.stderr.length, 0);
});
