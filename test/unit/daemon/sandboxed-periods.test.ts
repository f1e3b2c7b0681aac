/**
 * When sandboxed runs of earlier daemons could write (src/daemon/sandboxed-periods.ts): the file folded per
 * daemon, widened by the margin, merged past its bound, and a broken file failing closed. Not pure: a temp
 * folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { merge, SandboxedPeriods } from '../../../src/daemon/sandboxed-periods.js';

const MARGIN = 120_000;

/** `f` given a file path in a temp folder of its own, removed after. */
function inTemp(f: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'periods-'));
  try {
    f(join(dir, 'p.jsonl'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('merge: overlapping periods joined, the oldest joined past 200, never narrower', () => {
  assert.deepEqual(
    merge([
      [10, 20, ['/a']],
      [0, 5, ['/b']],
      [15, 30, ['/a']],
    ]),
    [[0, 30, ['/b', '/a']]],
  );
  assert.deepEqual(
    merge([
      [0, 5, []],
      [1_000_000, 1_000_010, ['/c']],
    ]),
    [
      [0, 5, []],
      [1_000_000, 1_000_010, ['/c']],
    ],
  );
  const many = Array.from({ length: 250 }, (_, i) => [i * 1_000_000, i * 1_000_000 + 1, [`/f${i}`]] as const);
  const m = merge(many);
  assert.equal(m.length, 200);
  assert.equal(m[0][0], 0);
  for (const [s, e, [f]] of many) assert.ok(m.some(([a, b, w]) => a <= s && e <= b && w.includes(f)), `${s}-${e} ${f} covered`);
});

test('the file: folded per daemon and written back; a run of this daemon appends its period', () =>
  inTemp((file) => {
  writeFileSync(file, '{"d":"a","s":100,"e":200,"w":["/ws"]}\n{"d":"a","s":100,"e":900,"w":["/tmp"]}\n{"d":"b","s":5000000,"e":5000100}\n');
  const p = new SandboxedPeriods(file, () => {});
  assert.deepEqual(p.earlier(), [
    [100, 900 + MARGIN, ['/ws', '/tmp']],
    [5000000, 5000100 + MARGIN, []],
  ]);
  assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 2);
  p.sandboxedRun(['/w2'], 7_000_000);
  const last = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!);
  assert.deepEqual([last.s, last.e, last.w], [7_000_000, 7_000_000, ['/w2']]);
  // the same folder again, soon after: nothing written; a new one: written at once
  p.sandboxedRun(['/w2'], 7_000_001);
  p.sandboxedRun(['/w3'], 7_000_002);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 4);
  assert.deepEqual(JSON.parse(lines[3]).w, ['/w3']);
  const again = new SandboxedPeriods(file, () => {}).earlier();
  assert.equal(again.length, 3);
  assert.deepEqual(again[2][2], ['/w2', '/w3']);
  }));

test('a missing file is no period; a broken one is everything until now', () =>
  inTemp((file) => {
  assert.deepEqual(new SandboxedPeriods(file, () => {}).earlier(), []);
  writeFileSync(file, 'not json\n');
  const logged: string[] = [];
  const [[s, e, w]] = new SandboxedPeriods(file, (l) => logged.push(l)).earlier();
  assert.equal(s, 0);
  assert.deepEqual(w, ['/']);
  assert.ok(e >= Date.now() - 1000);
  assert.match(logged.join('\n'), /broken line/);
  }));

test('a last line cut short (a daemon killed while appending) counts from two minutes before the file changed, not from the start of time; the file is mended', () =>
  inTemp((file) => {
  const hour = 3_600_000;
  const t0 = Date.now() - 5 * hour;
  writeFileSync(file, `${JSON.stringify({ d: 'a', s: t0, e: t0 + 60_000, w: ['/w'] })}\n{"d":"b","s":`);
  const changed = statSync(file).mtimeMs;
  const logged: string[] = [];
  const periods = new SandboxedPeriods(file, (l) => logged.push(l)).earlier();
  assert.equal(periods.length, 2);
  assert.equal(periods[0][0], t0, 'the whole lines stand');
  assert.equal(periods[1][0], changed - 120_000);
  assert.deepEqual(periods[1][2], ['/']);
  assert.ok(periods[1][1] >= Date.now() - 1000);
  assert.match(logged.join('\n'), /cut short/);
  // written back whole: the next daemon reads it without a cut line
  const next: string[] = [];
  assert.equal(new SandboxedPeriods(file, (l) => next.push(l)).earlier().length, 2);
  assert.deepEqual(next, []);
  // a broken line that is not the last still fails closed
  writeFileSync(file, `not json\n${JSON.stringify({ d: 'a', s: t0, e: t0 + 60_000 })}\n`);
  assert.equal(new SandboxedPeriods(file, () => {}).earlier()[0][0], 0);
  }));
