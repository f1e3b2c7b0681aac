import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { pidAlive, RunTable } from '../../src/daemon/runs.js';

const base = { cwd: '/tmp', sandbox_permissions: 'use_default' as const };

/** The pid of a real process that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const c = spawn('true');
  await new Promise((r) => c.once('exit', r));
  return c.pid!;
}

test('runs are bounded: a run whose gate-sh died goes after the grace period, a live one stays until the idle limit; finished runs linger', async () => {
  let now = 1_000_000;
  const t = new RunTable({ now: () => now, deadGraceMs: 60_000, maxIdleMs: 3_600_000, lingerMs: 600_000, sweepEveryMs: 1_000 });
  const dead = await deadPid();
  assert.equal(pidAlive(dead), false);
  assert.equal(pidAlive(process.pid), true);
  assert.equal(pidAlive(1), true, 'not ours (EPERM) or init: alive either way');
  const orphan = t.create({ ...base, pid: dead, root_pid: dead });
  const live = t.create({ ...base, pid: process.pid, root_pid: process.pid });
  // nested under a live outermost gate-sh: its own (sandbox-namespace) pid is never asked
  const nested = t.create({ ...base, pid: dead, root_pid: process.pid });
  const done = t.create({ ...base, pid: process.pid, root_pid: process.pid });
  t.finish(done.run_id);

  now += 59_000;
  t.sweep();
  assert.deepEqual([orphan, live, nested, done].map((r) => t.has(r.run_id)), [true, true, true, true], 'within the grace period nothing goes');
  now += 2_000;
  t.sweep();
  assert.equal(t.has(orphan.run_id), false, 'unused past the grace period with its gate-sh gone');
  assert.ok(t.has(live.run_id) && t.has(nested.run_id));
  now += 600_000;
  t.sweep();
  assert.equal(t.has(done.run_id), false, 'finished and past its linger time');
  now += 3_600_001;
  t.get(nested.run_id); // used: the idle clock restarts
  t.sweep();
  assert.equal(t.has(live.run_id), false, 'unused past the idle limit, alive or not');
  assert.ok(t.has(nested.run_id));
  assert.equal(t.size, 1);
});

test('runs: sweeping is time-gated on create, and the table never exceeds maxRuns (least recently used go first)', () => {
  let now = 0;
  const t = new RunTable({ now: () => now, maxRuns: 100, sweepEveryMs: 1_000, lingerMs: 10 });
  const first = t.create({ ...base, pid: process.pid, root_pid: process.pid });
  t.finish(first.run_id);
  now = 500;
  t.create({ ...base, pid: process.pid, root_pid: process.pid });
  assert.ok(t.has(first.run_id), 'no sweep before sweepEveryMs has passed');
  now = 1_000;
  t.create({ ...base, pid: process.pid, root_pid: process.pid });
  assert.equal(t.has(first.run_id), false, 'swept by the next create after the interval');

  const kept = t.create({ ...base, pid: process.pid, root_pid: process.pid });
  const ids = new Set<string>();
  for (let i = 0; i < 1_000; i++) {
    const r = t.create({ ...base, pid: process.pid, root_pid: process.pid });
    assert.match(r.run_id, /^r-[A-Za-z0-9_-]{12}$/);
    ids.add(r.run_id);
    t.get(kept.run_id); // kept in use
    assert.ok(t.size <= 100);
  }
  assert.equal(ids.size, 1_000, 'run ids are unique');
  assert.ok(t.has(kept.run_id), 'the run in use survives the evictions');
});

test('runs: a finished run keeps no settlements, and at most maxFinished finished runs are kept (the earliest finished go first)', () => {
  const t = new RunTable({ maxFinished: 10, sweepEveryMs: 3_600_000 });
  const live = t.create({ ...base, pid: process.pid, root_pid: process.pid });
  const ids: string[] = [];
  for (let i = 0; i < 25; i++) {
    const r = t.create({ ...base, pid: process.pid, root_pid: process.pid });
    r.own = { settled: new Map([['k', { type: 'Run' } as never]]), scripts: new Map() };
    ids.push(r.run_id);
    t.finish(r.run_id);
    assert.equal(t.peek(r.run_id)?.own, undefined, 'its settlements end with it');
    assert.ok(t.finishedCount <= 10, String(t.finishedCount));
  }
  assert.ok(t.finishedCount >= 9, String(t.finishedCount));
  // the latest finished are the ones kept; the live run is never counted or dropped
  assert.ok(t.has(ids[24]) && !t.has(ids[0]));
  assert.ok(t.live(live.run_id));
  assert.equal(t.size, t.finishedCount + 1);
});
