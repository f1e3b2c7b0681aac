/**
 * The exec gate with both layers on (LD_PRELOAD and the kernel layer, shims/launch/), real daemon,
 * real gate-sh, workspace-write sandbox (bubblewrap):
 *  - per exec from bash: 1,000 `/bin/true` from one bash ($EPOCHREALTIME around each), under gate-sh and
 *    under plain bash, in interleaved rounds; target: p50 overhead <= 0.5 ms;
 *  - per exec from a static program (fork + execv + wait, timed inside it): the kernel layer alone asks;
 *  - a real C build: 60 generated files, `make -j2`, through gate-sh, through plain bash and through the
 *    floor (plain bash under programs/notif-floor.c --call: one round trip, every exec answered at once and
 *    followed, none of gate-sh's work), in rounds of three, rotating which goes first; target: gated/plain
 *    wall time <= 1.10, given as the ratio of the means and as the median of the rounds' ratios (a round
 *    shares the machine's state of the moment), and the floor's the same way;
 *  - the floors on this machine, none of gate-sh's work in them: an exec whose execve a parent process
 *    answers "continue" through seccomp user notification (programs/notif-floor.c), the same also followed
 *    to its end with ptrace, and bash's execs with an empty library in LD_PRELOAD (each over plain).
 * Prints one JSON object on its last line.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { gateSh, run, execGateOptions, type Result } from '../exec-gate/helpers.js';
import { warmedUp } from '../daemon/helpers.js';
import { execTimes, type Floor, runBench, startFloor } from './helpers.js';
import { type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

const RULES = ['prefix_rule(pattern=["bash"], decision="allow")'];
const ROUNDS = 5;
const PER_ROUND = 200;
const BUILDS = 11;
const FILES = 60;

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);


function check(name: string, r: { code: number | null; stderr: string }): void {
  if (r.code !== 0) throw new Error(`${name} failed (${r.code}): ${r.stderr.slice(0, 500)}`);
}

async function fromBash(rig: DaemonProc): Promise<{ gated: number[]; plain: number[] }> {
  const script = `for i in $(seq ${PER_ROUND}); do s=$EPOCHREALTIME; /bin/true || exit 1; e=$EPOCHREALTIME; echo "$s $e"; done\n`;
  writeFileSync(join(rig.ws, 'true.sh'), script);
  const gated: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const g = await gateSh(rig, 'bash ./true.sh', { timeoutMs: 300_000 });
    const p = await run('/bin/bash', ['./true.sh'], { env: rig.env, cwd: rig.ws });
    check('gated', g);
    check('plain', p);
    gated.push(...execTimes(g.stdout));
    plain.push(...execTimes(p.stdout));
  }
  return { gated: sorted(gated), plain: sorted(plain) };
}

async function fromStatic(rig: DaemonProc, loop: string): Promise<{ gated: number[]; plain: number[] }> {
  const gated: number[] = [];
  const plain: number[] = [];
  const nums = (s: string) => s.trim().split('\n').map(Number).filter(Number.isFinite);
  for (let i = 0; i < ROUNDS; i++) {
    const g = await gateSh(rig, `"${loop}" ${PER_ROUND} /bin/true`, { timeoutMs: 300_000 });
    const p = await run(loop, [String(PER_ROUND), '/bin/true'], { env: rig.env, cwd: rig.ws });
    check('gated static', g);
    check('plain static', p);
    gated.push(...nums(g.stdout));
    plain.push(...nums(p.stdout));
  }
  return { gated: sorted(gated), plain: sorted(plain) };
}

/** The floors: the mechanisms the two layers stand on, with none of gate-sh's work, against plain. */
async function floors(rig: DaemonProc, bin: string): Promise<Record<string, number>> {
  const floor = join(bin, 'notif-floor');
  const empty = join(bin, 'empty.so');
  execFileSync('gcc', ['-static', '-O2', '-o', floor, join(ROOT, 'test', 'bench', 'programs', 'notif-floor.c')]);
  writeFileSync(join(bin, 'empty.c'), 'int gate_bench_empty;\n');
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', empty, join(bin, 'empty.c')]);
  const nums = (s: string) => s.trim().split('\n').map(Number).filter(Number.isFinite);
  const xs: Record<'plain' | 'notif' | 'follow' | 'bash' | 'preload', number[]> = { plain: [], notif: [], follow: [], bash: [], preload: [] };
  const loop = join(bin, 'exec-loop');
  for (let i = 0; i < ROUNDS; i++) {
    const take = async (k: keyof typeof xs, program: string, args: string[], env = rig.env) => {
      const r = await run(program, args, { env, cwd: rig.ws, timeoutMs: 300_000 });
      check(k, r);
      xs[k].push(...(k === 'bash' || k === 'preload' ? execTimes(r.stdout) : nums(r.stdout)));
    };
    await take('plain', loop, [String(PER_ROUND), '/bin/true']);
    await take('notif', floor, [String(PER_ROUND), '/bin/true']);
    await take('follow', floor, ['--follow', String(PER_ROUND), '/bin/true']);
    await take('bash', '/bin/bash', ['./true.sh']);
    await take('preload', '/bin/bash', ['./true.sh'], { ...rig.env, LD_PRELOAD: empty });
  }
  const p50 = (k: keyof typeof xs) => pct(sorted(xs[k]), 50);
  return {
    floor_notif_overhead_p50_ms: r3(p50('notif') - p50('plain')),
    floor_notif_follow_overhead_p50_ms: r3(p50('follow') - p50('plain')),
    floor_empty_preload_overhead_p50_ms: r3(p50('preload') - p50('bash')),
  };
}

/** A small C project: FILES sources with a few functions each, a main, a Makefile. */
function project(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const objs: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const fns = Array.from(
      { length: 8 },
      (_, k) => `int f${i}_${k}(int x) { int s = 0; for (int j = 0; j < x; j++) s += (j * ${k + 1}) ^ ${i}; return s; }`,
    ).join('\n');
    writeFileSync(join(dir, `m${i}.c`), `#include <stdio.h>\n${fns}\n`);
    objs.push(`m${i}.o`);
  }
  writeFileSync(join(dir, 'main.c'), 'int main(void) { return 0; }\n');
  writeFileSync(
    join(dir, 'Makefile'),
    `OBJS = main.o ${objs.join(' ')}\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%.o: %.c\n\t$(CC) -O1 -c $< -o $@\nclean:\n\trm -f prog *.o\n`,
  );
}

/** The builds, in rounds of three (gated, plain, and the floor: plain bash under notif-floor --call, every
 * exec answered at once and followed, one round trip before), the order rotating each round. */
async function build(rig: DaemonProc, floor: Floor): Promise<{ gated: number[]; plain: number[]; floor: number[] }> {
  const out = { gated: [] as number[], plain: [] as number[], floor: [] as number[] };
  const make = ['-c', 'make -s -j2 prog'];
  const sides: [keyof typeof out, (cwd: string) => Promise<Result>][] = [
    ['gated', (cwd) => gateSh(rig, 'make -s -j2 prog', { cwd, timeoutMs: 600_000 })],
    ['plain', (cwd) => run('/bin/bash', make, { env: rig.env, cwd, timeoutMs: 600_000 })],
    ['floor', (cwd) => run(floor.program, ['--call', floor.sock, '/bin/bash', ...make], { env: rig.env, cwd, timeoutMs: 600_000 })],
  ];
  for (let i = 0; i < BUILDS; i++) {
    // rotate which goes first: a change in the machine's load hits each alike
    for (let k = 0; k < sides.length; k++) {
      const [name, start] = sides[(k + i) % sides.length];
      const dir = join(rig.ws, `build-${name}${i}`);
      project(dir);
      const t0 = performance.now();
      check(`${name} build`, await start(dir));
      out[name].push(performance.now() - t0);
    }
  }
  return out;
}

async function main(): Promise<Record<string, unknown>> {
  const bin = mkdtempSync(join(tmpdir(), 'gate-bench-bin-'));
  const loop = join(bin, 'exec-loop');
  execFileSync('gcc', ['-static', '-O2', '-o', loop, join(ROOT, 'test', 'bench', 'programs', 'exec-loop.c')]);
  const rig = await startDaemon(execGateOptions({ rules: RULES, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  let figures: Record<string, unknown>;
  try {
    await warmedUp(rig.paths);
    const b = await fromBash(rig);
    const s = await fromStatic(rig, loop);
    const fl = await startFloor();
    const c = await build(rig, fl).finally(() => fl.stop());
    const f = await floors(rig, bin);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    figures = {
      layers: 'LD_PRELOAD + kernel (seccomp user notification)',
      sandbox: 'workspace-write',
      execs_from_bash: b.gated.length,
      bash_exec_p50_ms_gated: r3(pct(b.gated, 50)),
      bash_exec_p50_ms_plain: r3(pct(b.plain, 50)),
      bash_exec_overhead_p50_ms: r3(pct(b.gated, 50) - pct(b.plain, 50)),
      bash_exec_overhead_p90_ms: r3(pct(b.gated, 90) - pct(b.plain, 90)),
      execs_from_static: s.gated.length,
      static_exec_p50_ms_gated: r3(pct(s.gated, 50)),
      static_exec_p50_ms_plain: r3(pct(s.plain, 50)),
      static_exec_overhead_p50_ms: r3(pct(s.gated, 50) - pct(s.plain, 50)),
      target_exec_overhead_p50_ms: 0.5,
      build_files: FILES + 1,
      build_runs_each: BUILDS,
      build_ms_gated: c.gated.map(Math.round),
      build_ms_plain: c.plain.map(Math.round),
      build_ratio_mean: r3(mean(c.gated) / mean(c.plain)),
      build_ratio_median_of_pairs: r3(median(c.gated.map((g, i) => g / c.plain[i]))),
      target_build_ratio: 1.1,
      build_ms_floor: c.floor.map(Math.round),
      build_floor_ratio_median_of_pairs: r3(median(c.floor.map((g, i) => g / c.plain[i]))),
      ...f,
      loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    };
  } finally {
    killAll();
    await rig.close();
    rmSync(bin, { recursive: true, force: true });
  }
  return figures;
}

runBench(main);
