/**
 * The pure helpers of src/exec/client-plan.ts (the plan the daemon builds for the native gate-sh): reading
 * the client's environment list, the changes that turn one environment into another, the lines a denial
 * prints, and which attempts are in the turn's sandbox. (clientPlan itself, with bash and bwrap lookups,
 * is covered by test/shell/native-parity.test.ts.) Pure; test only, no trust boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { denialLines, envDelta, envRecord, turnDefault } from '../../../src/exec/client-plan.js';

test('envRecord: NAME=value entries, the first of a name wins (as getenv), entries without a name are skipped', () => {
  assert.deepEqual(envRecord(['A=1', 'B=x=y', 'A=2', '=nameless', 'NOEQUALS', 'E=']), { A: '1', B: 'x=y', E: '' });
});

test('envDelta: changed and new entries in the target order, removed names apart', () => {
  assert.deepEqual(envDelta({ A: '1', B: '2', C: '3' }, { C: '3', B: 'two', D: '4' }), { set: ['B=two', 'D=4'], unset: ['A'] });
  assert.deepEqual(envDelta({ A: '1' }, { A: '1' }), { set: [], unset: [] });
});

test('turnDefault: Run and an escalation to the turn sandbox; not an escalation out of it, nor a denial', () => {
  assert.equal(turnDefault({ type: 'Run' }), true);
  assert.equal(turnDefault({ type: 'Escalate', execution: { type: 'TurnDefault' } }), true);
  assert.equal(turnDefault({ type: 'Escalate', execution: { type: 'Unsandboxed' } }), false);
  assert.equal(turnDefault({ type: 'Deny', reason: 'x' }), false);
});

test('denialLines: one line per denied subcommand, with its command and reason', () => {
  const reply = {
    action: { type: 'Deny' as const, reason: 'overall' },
    subcommands: [
      { argv: ['ls'], action: { type: 'Run' as const } },
      { argv: ['rm', '-rf', '/'], action: { type: 'Deny' as const, reason: 'forbidden by rule' } },
    ],
  };
  assert.deepEqual(denialLines(reply as never, 'ls; rm -rf /'), ['denied: rm -rf /: forbidden by rule']);
});

test('denialLines: without a denied subcommand, the script first line and the overall reason', () => {
  assert.deepEqual(denialLines({ action: { type: 'Deny', reason: 'too large' }, subcommands: [] } as never, 'echo a\necho b'), [
    'denied: echo a: too large',
  ]);
});

test('denialLines: the no-approver denial already names the command and is printed as it is', () => {
  const reason = "approval needed for 'curl x' but no approver is attached (run gate approve)";
  const reply = { action: { type: 'Deny', reason }, subcommands: [{ argv: ['curl', 'x'], action: { type: 'Deny', reason } }] };
  assert.deepEqual(denialLines(reply as never, 'curl x'), [reason]);
});
