/**
 * Issue 28's figure: per-exec overhead and `gate-sh -lc` per-call cost of this build, side by side with an
 * older build (the commit before the issue's checks), alternating build by build within every round, so a
 * change of the machine's load hits both alike. Each build runs its own daemon (workspace-write,
 * on-request) in its own temp environment, and its own gate-sh.
 *  - per exec: one gated bash runs `/bin/true` PER_ROUND times, each timed with $EPOCHREALTIME; the same loop
 *    under plain bash gives the floor; overhead = gated median - plain median (ms);
 *  - per call: `gate-sh -lc S` over the ten typical agent scripts (agent-scripts.ts), wall time per call.
 * Results: medians per build, and current/base ratios (1.00 = unchanged; the issue asks for ±5 %).
 * Run (on a quiet machine; nothing here asserts a figure):
 *   git worktree add --detach /tmp/base bf17703 && cp -a node_modules /tmp/base/ && (cd /tmp/base && npm run -s build)
 *   npm run -s build && BENCH_BASE=/tmp/base npm run bench checks-ab
 * BENCH_ROUNDS (default 7) and BENCH_EXECS (execs per round, default 200) change the amount. Without
 * BENCH_BASE only this build is measured. Prints one JSON object on its last line. Test only.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE, GATE_SH } from '../helpers/env.js';
import { loadAverage, SCRIPTS, workspace } from './agent-scripts.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';
import { execTimes } from './helpers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PER_ROUND = Number(process.env.BENCH_EXECS ?? 200);
const BASE = process.env.BENCH_BASE;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

interface Build {
  name: string;
  gateSh: string;
  d: DaemonProc;
  ws: string;
  env: Record<string, string>;
  execMs: number[];
  plainMs: number[];
  callMs: Record<string, number[]>;
}

async function build(name: string, gate: string, gateSh: string): Promise<Build> {
  const d = await startDaemon({ gate, env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request' } });
  const ws = workspace(d.te.dir, d.env);
  const loop = `for i in $(seq ${PER_ROUND}); do s=$EPOCHREALTIME; /bin/true || exit 1; e=$EPOCHREALTIME; echo "$s $e"; done\n`;
  writeFileSync(join(ws, 'loop.sh'), loop);
  return { name, gateSh, d, ws, env: { ...d.env, GATE_NO_AUTOSTART: '1' }, execMs: [], plainMs: [], callMs: {} };
}

function run(cmd: string, args: string[], b: Build): string {
  const r = spawnSync(cmd, args, { env: b.env, cwd: b.ws, encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`${b.name}: ${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}


const builds = [await build('current', GATE, GATE_SH)];
if (BASE) builds.push(await build('base', join(BASE, 'bin', 'gate'), join(BASE, 'bin', 'gate-sh')));
const loadBefore = loadAverage();
try {
  for (let round = 0; round < ROUNDS; round++) {
    // which build goes first changes every round
    const order = round % 2 ? [...builds].reverse() : builds;
    for (const b of order) b.execMs.push(...execTimes(run(b.gateSh, ['loop.sh'], b)));
    for (const b of order) b.plainMs.push(...execTimes(run('bash', ['loop.sh'], b)));
    for (const s of SCRIPTS)
      for (const b of order) {
        const t0 = performance.now();
        run(b.gateSh, ['-lc', s], b);
        (b.callMs[s] ??= []).push(performance.now() - t0);
      }
  }
} finally {
  for (const b of builds) await b.d.close();
}

const summary = (b: Build) => {
  const perCall = Object.fromEntries(Object.entries(b.callMs).map(([s, xs]) => [s, r3(median(xs))]));
  return {
    exec_overhead_ms: r3(median(b.execMs) - median(b.plainMs)),
    exec_gated_ms: r3(median(b.execMs)),
    exec_plain_ms: r3(median(b.plainMs)),
    call_median_of_scripts_ms: r3(median(Object.values(perCall))),
    call_ms: perCall,
  };
};
const out: Record<string, unknown> = { rounds: ROUNDS, execs_per_round: PER_ROUND, base_checkout: BASE ?? null, load_average_before: loadBefore };
for (const b of builds) out[b.name] = summary(b);
if (BASE) {
  const [c, o] = [summary(builds[0]), summary(builds[1])];
  const ratios = Object.keys(c.call_ms).map((s) => c.call_ms[s] / o.call_ms[s]);
  out.ratio_current_to_base = {
    exec_overhead: r3(c.exec_overhead_ms / o.exec_overhead_ms),
    call_median_of_script_ratios: r3(median(ratios)),
  };
}
out.load_average_after = loadAverage();
console.log(JSON.stringify(out));
