/**
 * src/exec/sandbox-rerun.ts: the on-failure rerun. Only a sandboxed attempt that failed on a denial is
 * offered; the approver's Action decides whether it reruns and how, and the caller hears why. The daemon
 * and the run are the caller's functions (here plain ones that record their calls). Pure; test only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rerunDecision, rerunJustification, rerunOnDenial, type Attempt, type RerunOptions } from '../../../src/exec/sandbox-rerun.js';
import type { Action, EscalationExecution } from '../../../src/protocol/action.js';

const DENIED: Attempt = { status: 1, stderr: 'touch: cannot touch x: Read-only file system' };
const WHY = 'read-only file system in the sandbox: touch: cannot touch x: Read-only file system';

function caller(answer: Action | Error, first: Attempt = DENIED, sandboxed = true) {
  const calls = { asked: [] as string[], reruns: [] as EscalationExecution[], notices: [] as string[] };
  const o: RerunOptions = {
    first,
    sandboxed,
    ask: async (j) => {
      calls.asked.push(j);
      if (answer instanceof Error) throw answer;
      return answer;
    },
    rerun: async (e) => {
      calls.reruns.push(e);
      return { status: 0, stderr: '' };
    },
    notice: (l) => calls.notices.push(l),
  };
  return { o, calls };
}

test('rerunDecision: Deny is not rerun and says why; Run or the same sandbox is not rerun, silently', () => {
  assert.deepEqual(rerunDecision({ type: 'Deny', reason: 'no' }, 'w'), { rerun: false, notice: 'the sandboxed run failed (w); not rerun: no' });
  assert.deepEqual(rerunDecision({ type: 'Run' }, 'w'), { rerun: false });
  assert.deepEqual(rerunDecision({ type: 'Escalate', execution: { type: 'TurnDefault' } }, 'w'), { rerun: false });
});

test('rerunDecision: an escalation reruns, and the notice says outside the sandbox or with which permissions', () => {
  assert.deepEqual(rerunDecision({ type: 'Escalate', execution: { type: 'Unsandboxed' } }, 'w'), {
    rerun: true,
    notice: 'the sandboxed run failed (w); rerunning as approved (outside the sandbox)',
  });
  const p = rerunDecision({ type: 'Escalate', execution: { type: 'Permissions', profile: { network: true } } }, 'w');
  assert.equal(p.notice, 'the sandboxed run failed (w); rerunning as approved (with permissions {"network":true})');
});

test('rerunOnDenial: the daemon is asked with the denial as justification, and the approved rerun is the result', async () => {
  const { o, calls } = caller({ type: 'Escalate', execution: { type: 'Unsandboxed' } });
  assert.deepEqual(await rerunOnDenial(o), { status: 0, stderr: '' });
  assert.deepEqual(calls.asked, [rerunJustification(WHY)]);
  assert.deepEqual(calls.reruns, [{ type: 'Unsandboxed' }]);
  assert.equal(calls.notices.length, 1);
});

test('rerunOnDenial: unsandboxed, or no denial: nothing is asked, the first attempt stands', async () => {
  for (const c of [caller({ type: 'Run' }, DENIED, false), caller({ type: 'Run' }, { status: 2, stderr: 'syntax error' })]) {
    assert.equal(await rerunOnDenial(c.o), c.o.first);
    assert.deepEqual(c.calls, { asked: [], reruns: [], notices: [] });
  }
});

test('rerunOnDenial: a refusal or a failed question keeps the first attempt and says so', async () => {
  const denied = caller({ type: 'Deny', reason: 'not now' });
  assert.equal(await rerunOnDenial(denied.o), DENIED);
  assert.deepEqual(denied.calls.notices, [`the sandboxed run failed (${WHY}); not rerun: not now`]);
  const broken = caller(new Error('daemon gone'));
  assert.equal(await rerunOnDenial(broken.o), DENIED);
  assert.deepEqual(broken.calls.notices, [`the sandboxed run failed (${WHY}); could not ask to rerun it: daemon gone`]);
  assert.deepEqual(broken.calls.reruns, []);
});
