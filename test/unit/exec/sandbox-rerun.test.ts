/**
 * src/exec/sandbox-rerun.ts: what the approver's Action to the on-failure rerun's question means: whether it
 * reruns and how, and what the caller hears. (The sequence itself is the run machine's, src/exec/run-call.ts,
 * pinned end to end by test/sandbox/rerun-gate-sh.test.ts and test/integrations/mcp-rerun.test.ts.) Pure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rerunDecision } from '../../../src/exec/sandbox-rerun.js';

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
