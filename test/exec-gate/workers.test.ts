/**
 * The supervisor's workers (shims/launch/workers.c): one worker at a time waits for the kernel's next
 * notification, and keeps that turn while it decides what it took; it must let the next one be taken before
 * anything that waits. Here an exec waits for a person (a prompt rule, a real `gate approve --json` console
 * that has not answered yet) while the same run goes on making 50 execs: each of those is decided and runs
 * before the person answers; the held exec runs once approved. And the worker that answered an exec keeps the
 * turn while it follows that exec, within a bound: a failed exec followed at once by the same process's next
 * one still ends. Real daemon, real gate-sh, kernel layer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditRecords, execGateOptions, gateSh } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';
import { approveConsole } from '../daemon/helpers.js';

test('an exec waiting for a person holds up none of the run\'s other execs: 50 are decided and run meanwhile', async (t) => {
  const rules = ['prefix_rule(pattern=["touch", "held-xx"], decision="prompt")'];
  const rig = await startDaemon(execGateOptions({ rules, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  const human = await approveConsole(rig.te.env, 'human');
  t.after(async () => (await human.close(), killAll(), rig.close()));
  // (the command name is spelled at run time: pre-flight cannot see it, the exec gate asks at the exec)
  const script =
    'c=tou; ( "${c}ch" held-xx; echo "touched $?" ) & ' +
    'i=0; while [ $i -lt 50 ]; do /bin/true || exit 9; i=$((i+1)); done; echo "$i" > others-done; wait';
  const run = gateSh(rig, script, { timeoutMs: 120_000 });
  const prompt = await human.next('prompt');
  assert.match(prompt.command.join(' '), /touch held-xx$/);
  // the other execs go on while the prompt is open
  const done = join(rig.ws, 'others-done');
  await waitFor(() => existsSync(done) || undefined, 'the 50 other execs to run while the prompt is open');
  assert.equal(existsSync(join(rig.ws, 'held-xx')), false, 'the held exec ran before it was approved');
  human.answer(prompt.approval_id, 'approved');
  const r = await run;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /touched 0/);
  assert.equal(existsSync(join(rig.ws, 'held-xx')), true);
});

// A worker that let an exec through keeps the notifications' turn while it waits for the exec's end (workers.c);
// an exec that fails (here ENOEXEC: no ELF, no #!) never stops by itself, and the same process's next exec waits
// for that turn. The wait is bounded (follow.c, FOLLOW_BOUND_NS): past it the turn is let go and the process
// interrupted. Without the bound this run never ends. The failed execs after the first are answered from the
// grant kept for the file (no daemon round trip, so the turn is held throughout).
test('an exec that fails once let through, followed at once by the same process\'s next exec: both answered, the run goes on', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: [] }));
  t.after(() => (killAll(), rig.close()));
  writeFileSync(join(rig.ws, 'notelf'), 'plain text, no #! and no ELF\n', { mode: 0o755 });
  writeFileSync(
    join(rig.ws, 'fails.py'),
    [
      'import os, sys',
      'for i in range(3):',
      '    pid = os.fork()',
      '    if pid == 0:',
      '        try:',
      '            os.execv("./notelf", ["notelf"])',
      '        except OSError as e:',
      '            print("failed", e.errno, flush=True)',
      '        os.execv("/bin/echo", ["echo", "then ran"])',
      '    os.waitpid(pid, 0)',
      '',
    ].join('\n'),
  );
  const r = await gateSh(rig, 'python3 fails.py', { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'failed 8\nthen ran\n'.repeat(3));
  const notelf = auditRecords(rig).filter((l) => l.kind === 'exec' && l.argv?.[0]?.endsWith('/notelf'));
  assert.ok(notelf.some((l) => l.reused), `a later failed exec was answered from a kept grant: ${JSON.stringify(notelf)}`);
});
