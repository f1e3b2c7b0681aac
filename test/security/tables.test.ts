/**
 * Issue 28, bounded resources (the daemon's memory under many calls): what the daemon remembers per request
 * and per run is bounded by count, whatever the rate. A real daemon is driven by 20,000 requests and 1,500
 * runs on its request channel, and `gate status --json` shows its tables. Before: every answered request's
 * retry key was kept a minute (up to 100,000) and every finished run whole for ten minutes (up to 10,000),
 * all of it promoted to V8's old generation: the daemon's RSS grew tens of MiB over 10,000 `gate-sh -lc`
 * calls (test/bench/daemon-memory.bench.ts has the figure). Not timed: only sizes are asserted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon } from '../helpers/daemon.js';
import { runGate } from '../daemon/helpers.js';
import { RequestClient } from '../../src/transport/client.js';
import { MAX_DELIVERED } from '../../src/transport/server.js';

const PINGS = MAX_DELIVERED + 4_000;
const RUNS = 1_500;
/** RunTable's default maxFinished (src/daemon/runs.ts) */
const MAX_FINISHED = 1_000;

test('after 20,000 requests and 1,500 finished runs the daemon remembers a bounded number of each', { timeout: 180_000 }, async (t) => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'workspace-write' } });
  const c = RequestClient.open(d.paths);
  // the datagram client's waits hold no reference on the event loop
  const alive = setInterval(() => {}, 1000);
  t.after(async () => (clearInterval(alive), c.close(), await d.close()));
  // a few at a time: the daemon's datagram queue is short (net.unix.max_dgram_qlen)
  for (let i = 0; i < PINGS; i += 8) await Promise.all(Array.from({ length: 8 }, () => c.request({ type: 'ping' })));
  for (let i = 0; i < RUNS; i++) {
    const r: any = await c.request({ type: 'preflight', shell: 'bash', flag: '-c', script: `echo ${i % 7}`, cwd: d.ws, pid: process.pid, sandbox_permissions: 'use_default' });
    assert.equal(r.type, 'preflight', JSON.stringify(r));
    const ack: any = await c.request({ type: 'run-finished', run_id: r.run_id, exit_status: 0, duration_ms: 1 });
    assert.equal(ack.type, 'ack', JSON.stringify(ack));
  }
  const st = await runGate(d.env, ['status', '--json']);
  assert.equal(st.code, 0, st.stderr);
  const status = JSON.parse(st.stdout);
  // every request was answered: a run's 2 requests and the pings; the runs all finished. Each bound is
  // checked, and every one broken is said at once.
  const tables = status.tables ?? {};
  const broken = [
    status.runs <= MAX_FINISHED || `runs kept: ${status.runs} (at most ${MAX_FINISHED} finished ones)`,
    (tables.finished_runs <= MAX_FINISHED && tables.finished_runs >= MAX_FINISHED * 0.9 - 1) || `finished runs kept: ${tables.finished_runs}`,
    tables.answered <= MAX_DELIVERED || `answers remembered: ${tables.answered} (at most ${MAX_DELIVERED})`,
    tables.kept_replies < 100 || `replies kept: ${tables.kept_replies} (every datagram answer reached its client whole)`,
    tables.in_flight === 0 || `requests in flight: ${tables.in_flight}`,
    tables.client_folders <= RUNS || `client folders: ${tables.client_folders}`,
  ].filter((x) => x !== true);
  assert.deepEqual(broken, [], JSON.stringify(tables));
});
