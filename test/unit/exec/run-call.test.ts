/**
 * src/exec/run-call.ts's pure parts, and the call texts it shares with the native gate-sh
 * (src/protocol/shared-with-c.ts): a text's %s filled in order, the stderr tail the daemon reads (its last
 * bytes, from a character boundary), and the daemon planner's reading of the plan's environment. The
 * sequence itself runs against real daemons: test/shell/native-parity.test.ts (all three entry points),
 * test/sandbox/rerun-gate-sh.test.ts, test/integrations/mcp-rerun.test.ts. Pure; test only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planEnv } from '../../../src/exec/daemon-planner.js';
import { preflightOf, TAIL_BYTES, utf8Tail } from '../../../src/exec/run-call.js';
import { CALL_TEXTS, fill } from '../../../src/protocol/shared-with-c.js';

test('fill: each %s in order; a missing argument fills as nothing', () => {
  assert.equal(fill(CALL_TEXTS.rerunNotAsked, 'why', 'gone'), 'the sandboxed run failed (why); could not ask to rerun it: gone');
  assert.equal(fill(CALL_TEXTS.notAnswering, '35.0'), fill(CALL_TEXTS.notAnswering, '35.0', ''));
  assert.match(fill(CALL_TEXTS.notAnswering, '35.0', ''), /^the gate daemon did not answer within 35\.0 s; check 'gate status'/);
  assert.equal(fill(CALL_TEXTS.nothingRan, '50% of it'), '50% of it; nothing ran');
});

test('utf8Tail: the last TAIL_BYTES, starting at a character boundary', () => {
  assert.equal(utf8Tail(Buffer.from('short')), 'short');
  const big = Buffer.concat([Buffer.alloc(10_000, 'a'), Buffer.from('end\n')]);
  assert.equal(utf8Tail(big).length, TAIL_BYTES);
  assert.ok(utf8Tail(big).endsWith('end\n'));
  // a 3-byte character cut by the tail's start is dropped whole, never read as U+FFFD
  const cut = Buffer.concat([Buffer.from('€'), Buffer.alloc(TAIL_BYTES - 2, 'b')]);
  assert.equal(utf8Tail(cut), 'b'.repeat(TAIL_BYTES - 2));
});

test("planEnv: the plan's changes to the caller's environment, a changed name in its place, new ones last", () => {
  const env = { A: '1', B: '2', C: '3', U: undefined };
  assert.deepEqual(Object.entries(planEnv(env, { env_set: ['B=two', 'N=new', 'bad'], env_unset: ['C'] })), [
    ['A', '1'],
    ['B', 'two'],
    ['N', 'new'],
  ]);
});

test('preflightOf: the script as bash -c or -lc runs it, where, and this process asking', () => {
  assert.deepEqual(preflightOf(true, 'true', '/w'), { type: 'preflight', shell: 'bash', flag: '-lc', script: 'true', cwd: '/w', pid: process.pid });
  assert.equal(preflightOf(false, 'x', '/').flag, '-c');
});
