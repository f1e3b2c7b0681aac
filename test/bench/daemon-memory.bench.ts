/**
 * The daemon's resident memory over many calls (issue 28): RSS before and after 10,000 `gate-sh -lc` calls'
 * worth of requests (a plan pre-flight, then run-finished, as the native gate-sh sends them), one client,
 * and the daemon's own table sizes after (`gate status --json`, tables). Side by side with another build
 * when BENCH_BASE names its checkout (built: its bin/gate is started), alternating per round, e.g.
 *   git worktree add --detach /tmp/base <commit> && (cd /tmp/base && cp -a <this checkout>/node_modules . &&
 *   npm run -s build) && BENCH_BASE=/tmp/base npm run bench daemon-memory
 * BENCH_CALLS (10,000), BENCH_ROUNDS (1) and BENCH_MODES (workspace-write,danger-full-access) change the amount. RSS depends on when V8 collects: compare
 * rounds, not single figures. Prints one JSON object on its last line; nothing here asserts a figure.
 * Test only; no trust boundary.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE, GATE_SH } from '../helpers/env.js';
import { runGate } from '../daemon/helpers.js';
import { RequestClient } from '../../src/transport/client.js';
import { loadAverage, SCRIPTS, workspace } from './agent-scripts.js';
import { startDaemon } from '../helpers/daemon.js';
import { planCall } from './helpers.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const BASE = process.env.BENCH_BASE;
const r1 = (x: number): number => Math.round(x * 10) / 10;

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? r1(Number(m[1]) / 1024) : -1;
}

async function once(gate: string, mode: string): Promise<Record<string, unknown>> {
  const d = await startDaemon({ gate, env: { GATE_SANDBOX_MODE: mode, GATE_APPROVAL_POLICY: 'on-request' } });
  const c = RequestClient.open(d.paths);
  const alive = setInterval(() => {}, 1000);
  try {
    const ws = workspace(d.te.dir, d.env);
    const planEnv = Object.entries({ ...d.env, GATE_NO_AUTOSTART: '1' }).map(([k, v]) => `${k}=${v}`);
    const call = (i: number): Promise<void> => planCall(c, { script: SCRIPTS[i % SCRIPTS.length], cwd: ws, planEnv, gateSh: GATE_SH });
    // warmed: the parsers' and the plan's first use are not what grows
    for (let i = 0; i < 200; i++) await call(i);
    const pid = d.child.pid!;
    const before = rssMiB(pid);
    const t0 = performance.now();
    // RSS at each tenth of the calls: a table that grows shows as a climb to the end, a heap that settles
    // as a plateau
    const curve: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      await call(i);
      if ((i + 1) % Math.max(1, Math.floor(CALLS / 10)) === 0) curve.push(rssMiB(pid));
    }
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssMiB(pid);
    const st = await runGate(d.env, ['status', '--json']);
    const status = st.code === 0 ? JSON.parse(st.stdout) : {};
    const perCall = Math.round((ms / CALLS) * 100) / 100;
    const rss = { rss_before_mib: before, rss_after_mib: after, growth_mib: r1(after - before), rss_curve_mib: curve };
    return { ...rss, per_call_ms: perCall, runs: status.runs, tables: status.tables };
  } finally {
    clearInterval(alive);
    c.close();
    await d.close();
  }
}

const builds: [string, string][] = [['current', GATE]];
if (BASE) builds.push(['base', join(BASE, 'bin', 'gate')]);
const out: Record<string, unknown> = { calls: CALLS, rounds: ROUNDS, base_checkout: BASE ?? null, load_average_before: loadAverage() };
for (const mode of (process.env.BENCH_MODES ?? 'workspace-write,danger-full-access').split(',')) {
  const per: Record<string, Record<string, unknown>[]> = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, gate] of round % 2 ? [...builds].reverse() : builds) (per[name] ??= []).push(await once(gate, mode));
  out[mode] = per;
}
out.load_average_after = loadAverage();
console.log(JSON.stringify(out));
