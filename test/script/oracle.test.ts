/**
 * Real bash as the oracle (deps.md appendix): a prelude makes bash log every simple command it runs.
 * For every script the analyzer calls plain, bash ran exactly the reported commands (list semantics
 * simulated: `false`/`read` fail, everything else succeeds). For complex scripts, each extracted
 * command matches what bash ran under that name, and (unless the script builds names at run time)
 * every command bash ran was extracted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeScript, type ListOp, type Subcommand } from '../../src/script/analyze.js';
import { CORPUS } from './oracle-corpus.js';

const PRELUDE = String.raw`__rec() { local me=$BASHPID a t rec=C$'\x1f'; for a in "$@"; do rec+=$a$'\x1f'; done
  for a in 0 1 2; do t=$(/usr/bin/readlink /proc/$me/fd/$a); rec+="fd$a=$t"$'\x1f'; done
  builtin printf '%s\x1e' "$rec" >> "$__LOG"; }
command_not_found_handle() { __rec "$@"; return 0; }
echo() { __rec echo "$@"; }; printf() { __rec printf "$@"; }; test() { __rec test "$@"; }; [() { __rec [ "$@"; }
true() { __rec true "$@"; }; false() { __rec false "$@"; return 1; }; cd() { __rec cd "$@"; }
read() { __rec read "$@"; builtin read "$@"; }; pwd() { __rec pwd "$@"; }; trap() { __rec trap "$@"; builtin trap "$@"; }
PATH=/nonexistent`;

function runBash(script: string, dir: string, id: number): Promise<string[][]> {
  const log = join(dir, `log${id}`);
  return new Promise((resolve, reject) => {
    const p = spawn('/bin/bash', ['-c', `${PRELUDE}\n${script}`], {
      cwd: dir,
      env: { __LOG: log, HOME: dir, PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
    p.on('error', reject);
    p.on('exit', () => {
      clearTimeout(timer);
      // background jobs and process substitutions may still be writing
      const settle = /&|[<>]\(/.test(script) ? 300 : 0;
      setTimeout(() => {
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        resolve(text.split('\x1e').filter(Boolean).map((r) => r.split('\x1f').slice(1, -4)));
      }, settle);
    });
  });
}

/** Which of a plain script's commands bash runs, by bash list semantics. */
function expectedRuns(commands: Subcommand[], ops: ListOp[]): string[][] {
  const status = (c: Subcommand) => (['false', 'read'].includes(c.argv[0]) ? 1 : 0);
  const ran: string[][] = [];
  let last = 0;
  let skipping = false;
  for (let i = 0; i < commands.length; i++) {
    const op = i === 0 ? ';' : ops[i - 1];
    if (op === '|' || op === '|&') {
      if (!skipping) { ran.push(commands[i].argv); last = status(commands[i]); }
      continue;
    }
    if (op === '&&') skipping = last !== 0 ? true : false;
    else if (op === '||') skipping = last === 0 ? true : false;
    else skipping = false;
    if (skipping) continue; // a skipped pipeline keeps the previous status
    ran.push(commands[i].argv);
    last = status(commands[i]);
  }
  // `command x` is the builtin running x
  return ran.map((a) => (a[0] === 'command' ? a.slice(1) : a));
}

function isSubsequence(small: string[], big: string[]): boolean {
  let j = 0;
  for (const x of big) if (j < small.length && x === small[j]) j++;
  return j === small.length;
}

async function pool<T, R>(items: T[], n: number, f: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) { const i = next++; out[i] = await f(items[i], i); }
  }));
  return out;
}

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
