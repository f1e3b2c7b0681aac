// Differential test against the Codex oracle (codex execpolicy check, @openai/codex@0.169.0): every vector
// policy that 0.169.0 accepts plus random rule sets and commands (150 in npm test's time budget, about 0.1 s
// of CPU each for the oracle's start; .ci/run draws 1,000 with another seed; set POLICY_DIFF_CASES for
// more, POLICY_DIFF_SEED for another draw), with and without
// --resolve-host-executables. Output must be byte-identical; failures must fail on both sides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { vectors } from '../helpers/vectors.js';
import { oraclePath, pool, runOracle } from './oracle.js';
import { generateCase, rng, type Case } from './random-policy.js';
import { parsePolicy } from '../../src/rules/parser.js';
import { readRulesFile } from '../../src/rules/load.js';
import { formatCheckOutput } from '../../src/rules/codex-json.js';
import { PolicyError } from '../../src/rules/error.js';

const RANDOM_CASES = Number(process.env.POLICY_DIFF_CASES ?? 150);
const SEED = Number(process.env.POLICY_DIFF_SEED ?? 20261121);

interface Ours {
  ok: boolean;
  out: string;
}

function ours(paths: string[], c: Case): Ours {
  try {
    const policy = parsePolicy(paths.map(readRulesFile), { home: homedir() });
    const ev = policy.check(c.command, { resolveHostExecutables: c.resolve, hardened: false, cwd: process.cwd(), home: homedir() });
    return { ok: true, out: formatCheckOutput(ev, c.pretty) + '\n' };
  } catch (e) {
    if (e instanceof PolicyError) return { ok: false, out: e.reason };
    throw e;
  }
}

function vectorCases(): Case[] {
  const out: Case[] = [];
  for (const v of vectors.policy_cases) {
    const files: string[] = v.policy_files ?? [v.policy];
    const commands: string[][] = v.commands ?? [v.command];
    for (const command of commands) for (const resolve of [false, true]) out.push({ files, command, resolve, pretty: resolve });
  }
  for (const v of vectors.policy_errors) if (!v.codex_0_169_accepts) out.push({ files: [v.policy], command: ['git', 'status'], resolve: false, pretty: false });
  return out;
}

test('gate matches codex execpolicy check on vector and random policies', async () => {
  const bin = oraclePath();
  const dir = mkdtempSync(join(tmpdir(), 'pdiff-'));
  try {
    const r = rng(SEED);
    const random = Array.from({ length: RANDOM_CASES }, () => generateCase(r));
    const cases = [...vectorCases(), ...random];
    const mismatches: string[] = [];
    let errorsBoth = 0;
    await pool(cases.map((c, k) => ({ c, k })), 4, async ({ c, k }) => {
      const paths = c.files.map((text, j) => {
        const p = join(dir, `c${k}-${j}.rules`);
        writeFileSync(p, text);
        return p;
      });
      const args = [...paths.flatMap((p) => ['--rules', p]), ...(c.pretty ? ['--pretty'] : []), ...(c.resolve ? ['--resolve-host-executables'] : []), '--', ...c.command];
      const theirs = await runOracle(bin, args);
      const mine = ours(paths, c);
      const describe = () => `case ${k} (seed ${SEED}) args=${JSON.stringify(args.slice(paths.length * 2))}\n${c.files.join('\n---\n')}\ncodex: ${theirs.status} ${theirs.stdout}${theirs.stderr.slice(0, 600)}\ngate: ${mine.ok} ${mine.out}`;
      if (theirs.status === 0 && theirs.stdout.startsWith('{')) {
        if (!mine.ok || mine.out !== theirs.stdout) mismatches.push(describe());
      } else {
        if (mine.ok) mismatches.push(describe());
        else errorsBoth++;
        // in substance: Codex's text carries our reason (structural parse errors are worded differently)
        const core = mine.out.replace(/^starlark error: /, '');
        const reason = core.split(/ \(got| or use/)[0].slice(0, 60);
        if (!mine.ok && !core.startsWith('Parse error') && !core.startsWith('unsupported') && !theirs.stderr.includes(reason)) {
          mismatches.push(`wording: ${describe()}`);
        }
      }
    });
    assert.equal(mismatches.length, 0, `${mismatches.length} mismatches of ${cases.length}:\n${mismatches.slice(0, 8).join('\n=====\n')}`);
    assert.equal(random.length, RANDOM_CASES);
    assert.ok(errorsBoth > 0, 'some generated policies are invalid on both sides');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
