/** Many clients at once: no lost and no crossed replies. Real daemon, real sockets, real processes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateSh, pool, SHELL_DAEMON } from './helpers.js';
import { bursts } from './bursts.js';
import { daemonForFile } from '../helpers/daemon.js';

const daemon = daemonForFile(SHELL_DAEMON);

test('50 concurrent client processes × 20 scripts (4 in flight each): every reply arrives, none crossed, nothing left open', { timeout: 300_000 }, async () => {
  const res = await bursts(daemon.d.te.env, 50, 20, 4);
  assert.equal(res.length, 50);
  for (const r of res) {
    assert.equal(r.lost, 0, `${r.tag}: ${r.errors.join('; ')}`);
    assert.equal(r.crossed, 0, r.tag);
    assert.equal(r.open, 0, `${r.tag}: handles left open after the last answer`);
    assert.equal(r.ok, 20, r.tag);
  }
});

test('50 gate-sh processes at once: each runs its own script and prints its own output; the daemon log stays quiet', { timeout: 300_000 }, async () => {
  const env = { ...daemon.d.te.env, GATE_NO_AUTOSTART: '1' };
  const runs = await pool(Array.from({ length: 50 }, (_, i) => i), 50, (i) => gateSh(['-c', `echo "run-${i} $1"`, 'n', `arg${i}`], { env }));
  runs.forEach((r, i) => {
    assert.equal(r.code, 0, `run ${i}: ${r.stderr}`);
    assert.equal(r.stdout.toString(), `run-${i} arg${i}\n`);
  });
  // each gate-sh leaves without waiting for the ack of its run-finished: not a reply worth logging as dropped
  assert.doesNotMatch(daemon.d.output(), /dropped/);
});
