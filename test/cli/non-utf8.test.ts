/**
 * Issue 32, finding 3: bytes in, same bytes out. A script that is not UTF-8 (latin-1, random bytes) given
 * through -c, stdin or a file runs exactly as bash runs it: stdout (a file named with those bytes, listed
 * back), stderr and the exit status compared with bash's byte for byte; NUL bytes as bash handles them (dropped
 * from stdin and a file; a file with a NUL on its first line refused as binary, 126). Real daemon
 * (workspace-write: the run is sandboxed), real gate-sh (native, which hands these to the Node one, and Node).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH, GATE_SH_NODE } from '../helpers/env.js';
import { daemonForFile, killAll } from '../helpers/daemon.js';
import { run, type Ran } from '../shell/helpers.js';

after(killAll);
const daemon = daemonForFile({ env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });

/** Deterministic "random" bytes 0x80-0xff (never ASCII: no shell syntax, no '/'), some of them valid UTF-8 by chance. */
function randomHigh(seed: number, n: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = 0x80 | ((x >>> 16) & 0x7f);
  }
  return out;
}

interface Case {
  name: string;
  script: Buffer;
  /** bash's diagnostics name the script (myname, its path, bash): a script that is not UTF-8 reaches bash
   * from a descriptor, so gate-sh's name it /dev/fd/N (docs/shell.md); the rest of the line, bytes included,
   * is compared */
  named?: boolean;
}

const b = (s: string) => Buffer.from(s, 'latin1');
const cases: Case[] = [
  { name: 'latin-1 echo', script: b('echo caf\xe9\n') },
  { name: 'latin-1 file name', script: b('touch n\xe9e && ls n* | od -c && printf "%s\\n" n\xe9e\n') },
  ...[1, 2, 3].map((seed) => {
    const r = randomHigh(seed, 24);
    return { name: `random bytes ${seed}`, script: Buffer.concat([b('x='), r, b('; touch "$x" && ls | od -An -tx1 && printf "%s|" "$x" | od -An -tx1; echo "${#x}"\n')]) };
  }),
  { name: 'bad bytes in a command not found', script: Buffer.concat([b('nosuch'), randomHigh(9, 5), b('; echo "status $?"\n')]), named: true },
];

let n = 0;
/** One source (c: -c argument; stdin; file) under one program, in a folder of its own. */
async function runOne(program: string, how: 'c' | 'stdin' | 'file', script: Buffer, extraEnv: Record<string, string> = {}): Promise<Ran> {
  const d = daemon.d;
  const dir = join(d.ws, `run-${n++}`);
  mkdirSync(dir);
  const env = { ...d.env, ...extraEnv };
  if (how === 'stdin') return run(program, [], { env, cwd: dir, input: script });
  const file = join(d.ws, `script-${n++}.sh`);
  writeFileSync(file, script);
  if (how === 'file') return run(program, [file], { env, cwd: dir });
  // argv cannot carry these bytes from Node: a shell puts the file's bytes into the -c argument ($0 given)
  return run('/bin/sh', ['-c', `exec "$0" -c "$(cat "$1")" myname`, program, file], { env, cwd: dir });
}

function same(what: string, g: Ran, bash: Ran, named = false): void {
  assert.equal(g.code, bash.code, `${what}: exit status (gate-sh stderr ${JSON.stringify(g.stderr.toString('latin1'))})`);
  assert.equal(g.stdout.toString('latin1'), bash.stdout.toString('latin1'), `${what}: stdout`);
  const err = (r: Ran) => (named ? r.stderr.toString('latin1').replace(/^[^:\n]+: (line \d+: )?/gm, 'NAME: ') : r.stderr.toString('latin1'));
  assert.equal(err(g), err(bash), `${what}: stderr`);
  if (named) assert.match(bash.stderr.toString('latin1'), /command not found/);
}

test('scripts that are not UTF-8, through -c, stdin and a file: what bash prints, byte for byte', { timeout: 300_000 }, async () => {
  for (const c of cases)
    for (const how of ['c', 'stdin', 'file'] as const) {
      const bash = await runOne('/bin/bash', how, c.script);
      assert.ok(bash.stdout.length > 0, `${c.name}: bash printed something`);
      for (const [entry, program] of [
        ['native', GATE_SH],
        ['node', GATE_SH_NODE],
      ])
        same(`${c.name} via ${how} (${entry})`, await runOne(program, how, c.script), bash, c.named);
    }
});

test('NUL bytes: dropped from stdin and from a file as bash drops them; a NUL on a file’s first line is refused as bash refuses it', { timeout: 120_000 }, async () => {
  const nul: [string, 'stdin' | 'file', Buffer][] = [
    ['NUL on stdin', 'stdin', b('echo a\0b; echo c\n')],
    ['NUL later in a file', 'file', b('echo a; echo b\n\0echo x\n')],
    ['NUL on the first line of a file', 'file', b('echo a\0b; echo c\n')],
  ];
  for (const [name, how, script] of nul) {
    const bash = await runOne('/bin/bash', how, script);
    for (const program of [GATE_SH, GATE_SH_NODE]) {
      const g = await runOne(program, how, script);
      // the script's path differs per run: compare with it named the same
      const norm = (r: Ran) => r.stderr.toString('latin1').replace(/\/[^:]*script-\d+\.sh/g, 'SCRIPT');
      assert.equal(g.code, bash.code, `${name}: ${g.stderr}`);
      assert.equal(g.stdout.toString('latin1'), bash.stdout.toString('latin1'), name);
      assert.equal(norm(g), norm(bash), name);
    }
  }
});
