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

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['aa', 'bb', 'echo', 'printf', 'true', 'false', 'test', 'cd', '\\cc', "'dd'", '"ee"', 'f"f"', 'env', 'sudo', 'xargs', 'timeout'];
const FRAGMENTS = [
  'x', '-l', '--all', '"a b"', "'c d'", '\\x', 'a\\ b', '"q\\"r"', "$'t\\tu'", '*', '?', '{a,b}', '{}', '~', '~/p', 'k=~',
  '$x', '${y}', '"$z"', '$(aa)', '`bb`', '#c', 'a#b', '=', 'k=v', 'é', '😀', '"$"', '\\$y', "'$z'", '""', "''", '[x]',
  '!', '%', '@', 'a:b', '\\\n', '"\\\\"', '"a\\nb"', "'a\\nb'", '\\"', "\\'", '";"', '\\;', '"|"', '\\&', '\\(', '"{a,b}"',
  '\\*', "'*'", '"x\ny"', '-', '--', '0', '\\\\', '"\\$"', '$((1))', '\\#', '"#"', '\\~', 'a=b', 'a\\=b',
  "$'\\x41'", "$'\\101'", "$'\\u00e9'", "$'a\\'b'", '"\\`"', '"a\\\nb"', "'a\\\nb'", "'\\''", '\t', '{a..c}', 'a{b,c}d',
  '[]', ']', 'x[', '**', '@(x)', '!(x)', 'a=b=c', '~root', '\u00a0', '\f', '\v', '$"x"', '${#x}', '$$', '$?', '$1',
  '"$@"', '$-', '\\\t', '"\\a"', '\\\\\\', '\\\'\\\'', '"\'"', "'\"'", '{,}', '{x}', 'a}', '{', '}', ':',
];
const OPS = [' && ', ' || ', '; ', ' | ', '\n', ';\n', ' &&\n', ' |\n', ' & ', ' |& '];
const EXTRAS = [' > /dev/null', ' 2>&1', ' # trailing comment', ''];

function script(r: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const n = 1 + Math.floor(r() * 4);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (i > 0) s += r() < 0.9 ? pick(OPS.slice(0, 8)) : pick(OPS);
    if (r() < 0.15) s += `K${i}=${pick(['v', '"a b"', "'c'", '$x', '~/y', ''])} `;
    s += pick(NAMES);
    const args = Math.floor(r() * 4);
    for (let k = 0; k < args; k++) {
      s += ' ';
      const parts = 1 + Math.floor(r() * 2);
      for (let p = 0; p < parts; p++) s += pick(FRAGMENTS);
    }
    if (r() < 0.08) s += pick(EXTRAS);
  }
  return s;
}

test('generated scripts (GATE_FUZZ_N, default 500; GATE_FUZZ_SEED): plain means exactly what bash runs', async () => {
  const r = rng(Number(process.env.GATE_FUZZ_SEED ?? 20261121));
  const scripts = Array.from({ length: Number(process.env.GATE_FUZZ_N ?? 500) }, () => script(r));
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
