/**
 * `npm run bench realwork` (issue 29): the realwork suite's autoconf project (test/realwork/projects.ts),
 * bootstrapped once (`autoreconf -i`, not timed), then `./configure && make && make check` timed four ways in
 * rounds, the order rotating each round so a change in the machine's load hits each alike:
 *  - through gate-sh, workspace-write (default policy, no rules), against bubblewrap alone with the same
 *    turn sandbox (the plan's own bwrap argv for workspace-write); target ratio <= 1.10
 *  - through gate-sh, danger-full-access, against plain bash; target ratio <= 1.10
 * Where `perf` is installed each build also runs under `perf stat` (task-clock, page-faults, context-switches of
 * the whole process tree, the daemon not included), and the same ratios are given for CPU and page faults:
 * on a shared machine a build's wall time swings more than the gate's cost, its CPU and faults much less
 * (docs/history/2026-11-measurements.md, issue 29);
 * the daemon's CPU per gated build (its threads' time on CPU, /proc/<pid>/task/<tid>/schedstat, across the build);
 * and the daemon round trips per 100 execs of the build: the daemon's counters (pre-flight, exec requests,
 * paired reports) across one gated build, over the build's execs counted by strace under plain bash; the
 * counted build comes after the rounds (its daemon has seen builds before: programs' answers are handed over
 * up front, src/daemon/reuse-presets.ts), and each round's gated workspace-write build is counted too (the
 * first of them is the session's first build).
 * Beside them the floor: plain bash under test/bench/programs/notif-floor.c --call (one round trip to a responder
 * that does no work, then every exec of the build answered "continue" through seccomp user notification at once
 * and followed to its end, as the supervisor does): what the kernel layer's mechanisms alone cost the build,
 * with none of gate-sh's work (floor_over_plain).
 * With BENCH_BASE naming another built checkout (e.g. main's, copied aside), its gate-sh runs two more sides
 * against the same daemons (base_ww, base_dfa), alternating with the rest, and the ratios of this build's
 * gated sides over the base's are given too (an A/B of a change to the gate itself).
 * GATE_BENCH_SIDES (comma-separated side names) keeps only those sides, for trying things out.
 * Test-only; measures, asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { approvalCall } from '../../src/client/approval-client.js';
import { turnSandboxArgv } from '../../src/sandbox/bwrap-argv.js';
import { gateSandboxContext } from '../../src/sandbox/gate-context.js';
import { workspaceWrite } from '../../src/sandbox/policy.js';
import { findBwrap, prepareGateDirs } from '../../src/exec/sandbox-run.js';
import { GATE_SH } from '../helpers/env.js';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import { run, type Result } from '../helpers/run.js';
import { realworkDaemon } from '../realwork/helpers.js';
import { bootstrapped } from '../realwork/projects.js';
import { runBench, startFloor } from './helpers.js';

const ROUNDS = Number(process.env.GATE_BENCH_ROUNDS || 7);
const BASE = process.env.BENCH_BASE;
const ONLY = process.env.GATE_BENCH_SIDES?.split(',');
const SCRIPT = './configure -q && make -s && make -s check';
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

const EVENTS = ['task-clock', 'page-faults', 'context-switches'];
/** perf (optional), when it can count these events here: each build then runs under `perf stat`. */
const PERF = ['/usr/bin/perf', '/usr/local/bin/perf'].find((p) => {
  try {
    execFileSync(p, ['stat', '-x,', '-e', EVENTS.join(','), '--', '/bin/true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

/** `perf stat -x,` output: the counters by event name (task-clock in ms). */
function counted(file: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split(',');
    const ev = EVENTS.find((e) => f[2]?.startsWith(e));
    if (ev && Number.isFinite(Number(f[0]))) out[ev] = Number(f[0]);
  }
  return out;
}

function check(name: string, r: Result): void {
  if (r.code !== 0) throw new Error(`${name} failed (${r.code}): ${r.stderr.slice(0, 800)}`);
}

/** A fresh copy of the bootstrapped project in `dir`. */
function fresh(template: string, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  execFileSync('cp', ['-a', template, dir]);
}

async function counters(d: DaemonProc): Promise<Record<string, number>> {
  const s = (await approvalCall(d.paths, 'status')).status as { counters: Record<string, number> };
  return s.counters;
}

/** The daemon's threads' time on CPU so far, in ms (schedstat's first field, nanoseconds; a thread that ended
 * meanwhile is not counted: the daemon's are its own for its whole life). */
function daemonCpuMs(d: DaemonProc): number {
  const pid = d.child.pid!;
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

/** Daemon round trips between two readings of its counters: pre-flights, exec requests, paired reports. */
const trips = (before: Record<string, number>, after: Record<string, number>) =>
  ['preflight', 'exec', 'paired'].reduce((n, k) => n + (after[k] ?? 0) - (before[k] ?? 0), 0);

async function main(): Promise<Record<string, unknown>> {
  const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const ww = await realworkDaemon('workspace-write');
  const dfa = await realworkDaemon('danger-full-access');
  const floor = await startFloor();
  try {
    const template = join(ww.te.dir, 'template');
    mkdirSync(template);
    bootstrapped(template, ww.env);
    prepareGateDirs(ww.env);
    const bwrap = findBwrap(ww.env);
    const stat = join(ww.te.dir, 'perf-stat.csv');
    // the command as given, or under perf stat (its counters in `stat`)
    const timed = (cmd: string, args: string[], env: Record<string, string>, dir: string) =>
      PERF
        ? run(PERF, ['stat', '-x,', '-o', stat, '-e', EVENTS.join(','), '--', cmd, ...args], { env, cwd: dir, timeoutMs: 900_000 })
        : run(cmd, args, { env, cwd: dir, timeoutMs: 900_000 });
    const sides: Record<string, (dir: string) => Promise<Result>> = {
      gated_ww: (dir) => timed(GATE_SH, ['-lc', SCRIPT], ww.env, dir),
      bwrap_ww: (dir) => {
        const args = turnSandboxArgv(workspaceWrite(), gateSandboxContext({ cwd: dir, env: ww.env }))!;
        return timed(bwrap, [...args, '/bin/bash', '-lc', SCRIPT], ww.env, dir);
      },
      gated_dfa: (dir) => timed(GATE_SH, ['-lc', SCRIPT], dfa.env, dir),
      plain: (dir) => timed('/bin/bash', ['-lc', SCRIPT], dfa.env, dir),
      floor: (dir) => timed(floor.program, ['--call', floor.sock, '/bin/bash', '-lc', SCRIPT], dfa.env, dir),
    };
    if (BASE) {
      sides.base_ww = (dir) => timed(join(BASE, 'bin', 'gate-sh'), ['-lc', SCRIPT], ww.env, dir);
      sides.base_dfa = (dir) => timed(join(BASE, 'bin', 'gate-sh'), ['-lc', SCRIPT], dfa.env, dir);
    }
    const names = Object.keys(sides).filter((n) => !ONLY || ONLY.includes(n));
    // the daemon's round trips of each gated workspace-write build, in order: the first is the session's first
    // build; later ones get the programs' answers handed over up front (src/daemon/reuse-presets.ts)
    const perBuild: number[] = [];
    const perDfaBuild: number[] = [];
    const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const faults: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const switches: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const daemonCpu: Record<string, number[]> = Object.fromEntries(names.filter((n) => /^(gated|base)_/.test(n)).map((n) => [n, []]));
    for (let i = 0; i < ROUNDS; i++)
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + i) % names.length];
        // each side builds in its daemon's workspace (the one its sandbox may write)
        const dir = join(name.endsWith('_dfa') || name === 'plain' || name === 'floor' ? dfa.ws : ww.ws, `b-${name}`);
        fresh(template, dir);
        const before = name === 'gated_ww' ? await counters(ww) : undefined;
        const beforeDfa = name === 'gated_dfa' ? await counters(dfa) : undefined;
        const its = /_ww$/.test(name) ? ww : dfa;
        const cpu0 = daemonCpuMs(its);
        const t0 = performance.now();
        check(name, await sides[name](dir));
        ms[name].push(performance.now() - t0);
        daemonCpu[name]?.push(daemonCpuMs(its) - cpu0);
        if (PERF) {
          const c = counted(stat);
          cpu[name].push(c['task-clock']);
          faults[name].push(c['page-faults']);
          switches[name].push(c['context-switches']);
        }
        if (before) perBuild.push(trips(before, await counters(ww)));
        if (beforeDfa) perDfaBuild.push(trips(beforeDfa, await counters(dfa)));
      }
    // the build's execs, counted under plain bash; the daemon's round trips across one gated build
    const dir = join(ww.ws, 'b-count');
    fresh(template, dir);
    const trace = join(ww.te.dir, 'execs.trace');
    check('strace', await run('strace', ['-f', '-qq', '-e', 'trace=execve', '-o', trace, '/bin/bash', '-lc', SCRIPT], { env: ww.env, cwd: dir, timeoutMs: 900_000 }));
    const execs = readFileSync(trace, 'utf8').split('\n').filter((l) => /execve\(/.test(l) && !/ENOENT/.test(l)).length;
    fresh(template, dir);
    const before = await counters(ww);
    check('counted', await timed(GATE_SH, ['-lc', SCRIPT], ww.env, dir));
    const after = await counters(ww);
    const n = trips(before, after);
    // (undefined when a side was left out: GATE_BENCH_SIDES)
    const ratio = (a: string, b: string, of = ms) =>
      of[a]?.length && of[b]?.length
        ? { median_of_rounds: r3(median(of[a].map((x, i) => x / of[b][i]))), mean: r3(mean(of[a]) / mean(of[b])) }
        : undefined;
    // this build's gated sides over BENCH_BASE's (wall, CPU, faults)
    const ab = (of: Record<string, number[]>) =>
      BASE ? { workspace_write: ratio('gated_ww', 'base_ww', of), danger_full_access: ratio('gated_dfa', 'base_dfa', of) } : undefined;
    const perfFigures = PERF
      ? {
          cpu_ms: Object.fromEntries(names.map((n) => [n, cpu[n].map(Math.round)])),
          page_faults: faults,
          context_switches: switches,
          cpu_workspace_write_gated_over_bwrap: ratio('gated_ww', 'bwrap_ww', cpu),
          cpu_danger_full_access_gated_over_plain: ratio('gated_dfa', 'plain', cpu),
          cpu_floor_over_plain: ratio('floor', 'plain', cpu),
          faults_workspace_write_gated_over_bwrap: ratio('gated_ww', 'bwrap_ww', faults),
          faults_danger_full_access_gated_over_plain: ratio('gated_dfa', 'plain', faults),
          cpu_gated_over_base: ab(cpu),
          faults_gated_over_base: ab(faults),
        }
      : { perf: 'not installed: wall times only' };
    return {
      script: SCRIPT,
      rounds: ROUNDS,
      ms: Object.fromEntries(names.map((n) => [n, ms[n].map(Math.round)])),
      workspace_write_gated_over_bwrap: ratio('gated_ww', 'bwrap_ww'),
      danger_full_access_gated_over_plain: ratio('gated_dfa', 'plain'),
      floor_over_plain: ratio('floor', 'plain'),
      target_ratio: 1.1,
      base: BASE,
      gated_over_base: ab(ms),
      ...perfFigures,
      daemon_cpu_ms_per_build: Object.fromEntries(Object.entries(daemonCpu).map(([n, v]) => [n, v.map(Math.round)])),
      build_execs: execs,
      daemon_round_trips: n,
      daemon_round_trips_per_100_execs: r3((n * 100) / execs),
      daemon_round_trips_per_gated_ww_build: perBuild,
      daemon_round_trips_per_gated_dfa_build: perDfaBuild,
      first_build_round_trips_per_100_execs: r3((perBuild[0] * 100) / execs),
      loadavg_start: load0,
      loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    };
  } finally {
    floor.stop();
    killAll();
    await ww.close();
    await dfa.close();
  }
}

runBench(main);
