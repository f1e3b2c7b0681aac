import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { tempEnv } from '../helpers/env.js';
import { AuditLog } from '../../src/daemon/audit.js';
import { preflight } from './helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

after(killAll);

function lines(path: string): Record<string, any>[] {
  const text = readFileSync(path, 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'the log ends with a whole line');
  return text === '' ? [] : text.slice(0, -1).split('\n').map((l) => JSON.parse(l));
}

test('audit batching: every record, in order, whole lines; queued records reach the file on the next turn and on close', async () => {
  const te = tempEnv();
  try {
    const path = join(te.dir, 'a', 'audit.jsonl');
    const log = new AuditLog(path, 'sess "quoted"');
    // small and large batches (one over the reused 64 KiB buffer), non-ASCII, both entry points
    const big = 'é'.repeat(30_000);
    for (let i = 0; i < 3000; i++) {
      if (i % 3 === 0) log.writeEncoded(`"kind":"exec","run_id":${JSON.stringify(`r-${i}`)},"detail":"ünïcode ${i}"`);
      else log.write({ kind: 'decision', run_id: `r-${i}`, argv: ['echo', String(i)], detail: i === 1000 ? big : undefined });
      if (i % 500 === 499) log.flush();
    }
    await nextTurn();
    const before = lines(path);
    assert.equal(before.length, 3000, 'flushed on the next turn of the event loop without an explicit flush');
    log.write({ kind: 'daemon', detail: 'last' });
    log.close(); // flushes what is queued
    log.write({ kind: 'daemon', detail: 'after close: dropped, no crash' });
    const recs = lines(path);
    assert.equal(recs.length, 3001);
    recs.slice(0, 3000).forEach((r, i) => {
      assert.equal(r.run_id, `r-${i}`, `record ${i} in order`);
      assert.equal(r.session, 'sess "quoted"');
      assert.match(r.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(r.kind, i % 3 === 0 ? 'exec' : 'decision');
    });
    assert.equal(recs[1000].detail, big);
    assert.equal(recs[3].detail, 'ünïcode 3');
    assert.deepEqual(Object.keys(recs[1]).slice(0, 4), ['time', 'session', 'kind', 'run_id']);
    assert.equal(recs[3000].detail, 'last');
  } finally {
    te.cleanup();
  }
});

test('audit: a pre-flight reply leaves only after its decision records are in the log; a stop writes everything', async (t) => {
  const te = tempEnv();
  t.after(() => te.cleanup()); // after the daemon stopped, passed or failed
  const d = await startDaemon({ te, args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  try {
    for (let i = 0; i < 20; i++) {
      const r = await preflight(d.paths, `echo a${i} && ls b${i} | wc -l; pwd`);
      // read at once, in this process: no event-loop turn of the daemon could have flushed in between
      const mine = lines(d.paths.auditLog).filter((x) => x.run_id === r.run_id);
      assert.deepEqual(
        mine.map((x) => [x.kind, x.argv.join(' ')]),
        [['decision', `echo a${i}`], ['decision', `ls b${i}`], ['decision', 'wc -l'], ['decision', 'pwd']],
      );
    }
    // cached repeats of one script are audited like the first (the encoded fields are reused, not the record)
    const runs = [await preflight(d.paths, 'echo same'), await preflight(d.paths, 'echo same')];
    const recs = lines(d.paths.auditLog);
    for (const r of runs) assert.equal(recs.filter((x) => x.run_id === r.run_id && x.argv.join(' ') === 'echo same' && x.action === 'Run').length, 1);
  } finally {
    await d.stop();
  }
  const recs = lines(d.paths.auditLog);
  assert.equal(recs.at(-1)!.kind, 'daemon');
  assert.match(recs.at(-1)!.detail, /^stopped pid/);
  assert.equal(recs.filter((x) => x.kind === 'decision').length, 20 * 4 + 2);
});
