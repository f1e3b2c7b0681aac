/**
 * Real bash as the oracle: a prelude makes bash log every simple command it runs.
 * For every script the analyzer calls plain, bash ran exactly the reported commands (list semantics
 * simulated: `false`/`read` fail, everything else succeeds). For complex scripts, each extracted
 * command matches what bash ran under that name, and (unless the script builds names at run time)
 * every command bash ran was extracted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeScript } from '../../src/script/analyze.js';
import { CORPUS } from '../unit/script/oracle-corpus.js';
import { expectedRuns, isSubsequence, pool, runBash } from './bash-oracle.js';

test(`${CORPUS.length} scripts against real bash: plain means exactly what bash runs`, async () => {
  assert.ok(CORPUS.length >= 150);
  const dir = mkdtempSync(join(tmpdir(), 'oracle-'));
  try {
    const runs = await pool(CORPUS, 8, ([, script], i) => runBash(script, dir, i));
    const failures: string[] = [];
    let plain = 0;
    CORPUS.forEach(([kind, script], i) => {
      const a = analyzeScript(script);
      const ran = runs[i];
      const where = JSON.stringify(script);
      if ((kind === 'p') !== (a.kind === 'plain')) {
        failures.push(`${where}: expected ${kind === 'p' ? 'plain' : 'complex'}, got ${a.kind} ${a.kind === 'complex' ? a.reasons.join('; ') : ''}`);
        return;
      }
      if (a.kind === 'plain') {
        plain++;
        const want = expectedRuns(a.commands, a.ops).map((x) => JSON.stringify(x));
        const got = ran.map((x) => JSON.stringify(x));
        if (a.ops.some((o) => o === '|')) { want.sort(); got.sort(); } // pipeline stages run concurrently
        if (JSON.stringify(want) !== JSON.stringify(got)) failures.push(`${where}: reported ${want.join(' ')}; bash ran ${got.join(' ')}`);
        return;
      }
      const innerOf = new Set(a.literalCommands.flatMap((c) => c.inner.map((x) => JSON.stringify(x))));
      for (const c of a.literalCommands) {
        if (innerOf.has(JSON.stringify(c.argv))) continue;
        const same = ran.filter((r) => r[0] === c.argv[0]);
        if (same.length > 0 && !same.some((r) => isSubsequence(c.argv, r)))
          failures.push(`${where}: extracted ${JSON.stringify(c.argv)}; bash ran ${JSON.stringify(same)}`);
      }
      if (kind === 'c') {
        const names = new Set(a.literalCommands.map((c) => c.argv[0]));
        for (const r of ran) if (!names.has(r[0])) failures.push(`${where}: bash ran ${JSON.stringify(r)}, not extracted`);
      }
    });
    assert.deepEqual(failures, []);
    assert.ok(plain >= 100, `only ${plain} plain scripts`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
