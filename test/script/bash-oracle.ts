/**
 * Real bash as the oracle: a prelude empties PATH and shadows builtins so that every
 * simple command bash runs is logged with its argv. Used by oracle.test.ts and oracle-fuzz.test.ts.
 */
import { spawn } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ListOp, Subcommand } from '../../src/script/analyze.js';

// a fuller prelude would also log where fds 0-2 point (3 readlink processes per command); only argv matters here.
const PRELUDE = String.raw`__rec() { local a rec=C$'\x1f'; for a in "$@"; do rec+=$a$'\x1f'; done
  builtin printf '%s\x1e' "$rec" >> "$__LOG"; }
command_not_found_handle() { __rec "$@"; return 0; }
echo() { __rec echo "$@"; }; printf() { __rec printf "$@"; }; test() { __rec test "$@"; }; [() { __rec [ "$@"; }
true() { __rec true "$@"; }; false() { __rec false "$@"; return 1; }; cd() { __rec cd "$@"; }
read() { __rec read "$@"; builtin read "$@"; }; pwd() { __rec pwd "$@"; }; trap() { __rec trap "$@"; builtin trap "$@"; }
PATH=/nonexistent`;

export function runBash(script: string, dir: string, id: number): Promise<string[][]> {
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
        resolve(text.split('\x1e').filter(Boolean).map((r) => r.split('\x1f').slice(1, -1)));
      }, settle);
    });
  });
}

/** Which of a plain script's commands bash runs, by bash list semantics. */
export function expectedRuns(commands: Subcommand[], ops: ListOp[]): string[][] {
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
    if (op === '&&') skipping = last !== 0;
    else if (op === '||') skipping = last === 0;
    else skipping = false;
    if (skipping) continue; // a skipped pipeline keeps the previous status
    ran.push(commands[i].argv);
    last = status(commands[i]);
  }
  // `command [-p] [--] x` is the builtin running x; `command` alone runs nothing, nor does an empty name
  return ran.flatMap((a) => {
    if (a[0] !== 'command') return [a];
    let i = 1;
    while (a[i] === '-p') i++;
    if (a[i] === '--') i++;
    return i < a.length ? [a.slice(i)] : [];
  });
}

export function isSubsequence(small: string[], big: string[]): boolean {
  let j = 0;
  for (const x of big) if (j < small.length && x === small[j]) j++;
  return j === small.length;
}

export async function pool<T, R>(items: T[], n: number, f: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) { const i = next++; out[i] = await f(items[i], i); }
  }));
  return out;
}

