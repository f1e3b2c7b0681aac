/**
 * The fast way of calling bash-parser (src/script/bash-parser-call.ts) gives exactly what the stock
 * `require('bash-parser')` gives: the same AST with the same locations, or the same error, for every
 * corpus script, 2,000 generated ones, and scripts that make bash-parser fail. Calls are interleaved, so
 * state leaking from one parse into the next would show.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bashParse, stockBashParse } from '../../../src/script/bash-parser-call.js';
import { CORPUS } from './oracle-corpus.js';
import { randomScript, rng } from './fuzz-scripts.js';

function outcome(parse: (s: string) => unknown, src: string): string {
  try {
    return JSON.stringify(parse(src));
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message.split('\n')[0]}`;
  }
}

const FAILING = ['echo $((', 'if then fi', "echo 'x", 'a && && b', 'echo $(( 1 + ))', 'case x in', 'a |', '(', 'echo `', 'echo ${'];
const LONG = Array.from({ length: 200 }, (_, i) => `echo line${i} "arg ${i}" && true`).join('\n');

test('bash-parser called once-built and with the fast location copy: same ASTs and errors as stock', () => {
  const r = rng(7);
  // failing scripts first, in the middle and last: a failed parse must leave nothing behind for the next one
  const scripts = [
    ...FAILING,
    ...CORPUS.map(([, s]) => s),
    ...FAILING,
    ...Array.from({ length: 2000 }, () => randomScript(r)),
    ...FAILING,
    LONG,
    'éé 😀 "x y"\n\tz',
    '',
  ];
  const diffs: string[] = [];
  let errors = 0;
  for (const s of scripts) {
    const want = outcome(stockBashParse, s);
    const got = outcome(bashParse, s);
    if (!want.startsWith('{')) errors++;
    if (got !== want) diffs.push(`${JSON.stringify(s)}:\n  stock ${want.slice(0, 300)}\n  fast  ${got.slice(0, 300)}`);
  }
  assert.deepEqual(diffs.slice(0, 10), []);
  assert.ok(errors >= 3 * FAILING.length && errors < scripts.length / 2, `${errors} errors of ${scripts.length}`);
});
