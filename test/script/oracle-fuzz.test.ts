/**
 * Generated scripts against real bash: random words (quoting, escapes, globs, braces, tildes,
 * expansions, comments, UTF-8) joined by random operators. Whatever the analyzer calls plain must run
 * exactly the reported commands in bash. Seeded, so a failure reproduces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeScript } from '../../src/script/analyze.js';
import { expectedRuns, pool, runBash } from './bash-oracle.js';
import { randomScript, rng } from '../unit/script/fuzz-scripts.js';

test('generated scripts (GATE_FUZZ_N, default 500; GATE_FUZZ_SEED): plain means exactly what bash runs', async () => {
  const r = rng(Number(process.env.GATE_FUZZ_SEED ?? 20261121));
  const scripts = Array.from({ length: Number(process.env.GATE_FUZZ_N ?? 500) }, () => randomScript(r));
  const analyses = scripts.map((s) => analyzeScript(s));
  const plainIdx = analyses.flatMap((a, i) => (a.kind === 'plain' ? [i] : []));
  const dir = mkdtempSync(join(tmpdir(), 'fuzz-'));
  try {
    const runs = await pool(plainIdx, 8, (i) => runBash(scripts[i], dir, i));
    const failures: string[] = [];
    plainIdx.forEach((i, k) => {
      const a = analyses[i];
      if (a.kind !== 'plain') return;
      const want = expectedRuns(a.commands, a.ops).map((x) => JSON.stringify(x));
      const got = runs[k].map((x) => JSON.stringify(x));
      if (a.ops.some((o) => o === '|')) { want.sort(); got.sort(); }
      if (JSON.stringify(want) !== JSON.stringify(got)) failures.push(`${JSON.stringify(scripts[i])}: reported ${want.join(' ')}; bash ran ${got.join(' ')}`);
    });
    assert.deepEqual(failures.slice(0, 40), []);
    // the generator must exercise both outcomes
    assert.ok(plainIdx.length > scripts.length / 10 && plainIdx.length < scripts.length * 0.9, `${plainIdx.length} plain of ${scripts.length}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
