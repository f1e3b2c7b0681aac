/**
 * The daemon's kept readings of which children of gate-sh's plumbing it started (src/daemon/provenance.ts,
 * StartedHere): the first child is kept as started there, a later sibling is read as adopted each time and
 * never kept, and the keeping changes no reading. Real processes: a bash copied under a plumbing name
 * (bwrap) starts two sleeps, read from /proc as the daemon reads a run's processes. Test only.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AncestryReader, StartedHere } from '../../src/daemon/provenance.js';
import { waitFor } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'g-started-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return ''; // gone meanwhile
  }
}

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
}

test('a plumbing parent: its first child kept as started there, its later child adopted and not kept; the same readings with and without the keeping', async (t) => {
  const plumbing = join(dir, 'bwrap');
  copyFileSync('/bin/bash', plumbing);
  // the second sleep starts a moment after the first (start times are clock ticks, ties go by pid)
  const p = spawn(plumbing, ['-c', 'sleep 60 & sleep 0.05; sleep 60 & wait'], { stdio: 'ignore' });
  t.after(() => {
    for (const c of childrenOf(p.pid!)) process.kill(c, 'SIGKILL');
    p.kill('SIGKILL');
  });
  const [first, second] = await waitFor(() => {
    const k = childrenOf(p.pid!).filter((c) => cmdline(c) === 'sleep\x0060\x00');
    return k.length === 2 ? k : undefined;
  }, 'the two sleeps');

  const kept = new StartedHere();
  const reader = new AncestryReader(kept);
  const parentId = (a: ReturnType<AncestryReader['read']>) => a!.chain[1].id!;
  const one = reader.read(first, undefined);
  assert.equal(one!.chain[0].argv[0], 'sleep');
  assert.equal(one!.chain[0].adopted, undefined, 'the first child is the plumbing\'s own');
  assert.equal(kept.has(StartedHere.key(one!.chain[0].id!, parentId(one))), true);

  const two = reader.read(second, undefined);
  assert.equal(two!.chain[0].adopted, true, 'a later sibling is adopted');
  assert.equal(kept.has(StartedHere.key(two!.chain[0].id!, parentId(two))), false, 'adopted is never kept');
  assert.equal(reader.read(second, undefined)!.chain[0].adopted, true, 'and read so again');

  // read again from the kept reading, and afresh (a reader of its own): the same
  assert.deepEqual(reader.read(first, undefined), new AncestryReader().read(first, undefined));
  assert.deepEqual(reader.read(second, undefined), new AncestryReader().read(second, undefined));
});

test('the keeping is bounded: the oldest reading is forgotten first', () => {
  const kept = new StartedHere(2);
  for (const k of ['a', 'b', 'c']) kept.add(k);
  assert.deepEqual(
    ['a', 'b', 'c'].map((k) => kept.has(k)),
    [false, true, true],
  );
});
