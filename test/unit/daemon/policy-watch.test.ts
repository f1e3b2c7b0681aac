// The rule files' hot reload (src/daemon/policy-watch.ts): the polled signature notices a watched file that
// appears, a file added to a watched folder, a file rewritten (in place with the same size too, or renamed
// over by an editor's save) and a file removed, and nothing else (a watched path that is missing, or a file
// rather than a folder, is stat'ed without an exception); a poll that finds nothing changed runs none of the
// watcher's JavaScript. Uses a temporary folder and the watcher's own polling (every few milliseconds; each
// step waits for the reload it causes); no processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PolicyWatcher, type ReloadEvent } from '../../../src/daemon/policy-watch.js';

test('PolicyWatcher: a change to a watched file or folder reloads; a poll that finds none does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'watch-'));
  const rules = join(dir, 'rules');
  const single = join(dir, 'single.rules');
  const missing = join(dir, 'never');
  let loads = 0;
  let listed = 0;
  const events: ReloadEvent[] = [];
  let waiting: (() => void) | undefined;
  const w = new PolicyWatcher(
    { load: () => ++loads, watchPaths: () => (listed++, [rules, single, missing]), files: () => [] },
    (e) => (events.push(e), waiting?.()),
  );
  // (bounded: a change the poll cannot see fails this test with its name, rather than hanging the suite)
  const reload = (change: () => void) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no reload after: ${change.toString()}`)), 20_000);
      waiting = () => (clearTimeout(t), resolve());
      change();
    });
  // (the watcher's timer does not hold the process: this does, while the test waits for it)
  const alive = setInterval(() => undefined, 1000);
  try {
    w.start(2, 1);
    await reload(() => writeFileSync(single, 'a'));
    await reload(() => mkdirSync(rules));
    await reload(() => writeFileSync(join(rules, 'x.rules'), 'x'));
    await reload(() => writeFileSync(join(rules, 'x.rules'), 'xy'));
    // the same size, the same inode, a later modification time only
    const was = statSync(join(rules, 'x.rules'));
    // (the time set a second later: two writes within one tick of the kernel's clock would share the first's)
    const later = new Date(was.mtimeMs + 1000);
    await reload(() => (writeFileSync(join(rules, 'x.rules'), 'yz'), utimesSync(join(rules, 'x.rules'), later, later)));
    assert.equal(statSync(join(rules, 'x.rules')).ino, was.ino);
    // an editor's save: written aside, renamed over
    await reload(() => (writeFileSync(join(rules, '.x.swp'), 'new'), renameSync(join(rules, '.x.swp'), join(rules, 'x.rules'))));
    await reload(() => writeFileSync(join(rules, 'x.rules'), 'after the rename'));
    await reload(() => rmSync(single));
    // (a write the poll caught half-way, created then filled, may reload twice)
    assert.ok(events.length >= 8, `${events.length}`);
    assert.ok(events.every((e) => e.ok));
    // nothing changed since: many polls later, still as many, and the signature not computed again. First
    // the stragglers: a step's wait ends at the first reload, and a write the poll caught half-way reloads
    // again later, maybe after the next step began (which then ends on that straggler, and its own reload
    // comes later still). So: wait for a stretch of polls in which nothing was reloaded or computed.
    const polls = (n: number) =>
      new Promise<void>((resolve) => {
        let i = 0;
        const t = setInterval(() => ++i >= n && (clearInterval(t), resolve()), 2);
      });
    for (let quiet = false, tries = 0; !quiet && tries < 100; tries++) {
      const [e, l] = [events.length, listed];
      await polls(20);
      quiet = events.length === e && listed === l;
    }
    const polled = events.length;
    const signatures = listed;
    await polls(20);
    assert.equal(events.length, polled);
    assert.equal(listed, signatures, 'a poll that found nothing changed ran the signature');
    assert.equal(loads, events.length + 1, 'the first load and one per change seen');
  } finally {
    clearInterval(alive);
    w.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
