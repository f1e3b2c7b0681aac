/**
 * Issue 18's figure: `gate-sh -c true` joining a warm session sandbox (the default) against today's sandbox
 * of its own per command (GATE_SESSION_SANDBOX=off), under workspace-write with the network off, both
 * through the native entry and the Node one, next to `node -e 0` (the goal: joining costs less than
 * building, ≤ 1.1× `node -e 0`). The variants alternate within each round (the machine is shared); the load
 * average is printed before and after. Medians and p90 in ms; nothing here asserts a time. Prints one JSON
 * object on its last line.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { warmedUp } from '../daemon/helpers.js';
import { startDaemon } from '../helpers/daemon.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const q = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const r2 = (x: number): number => Math.round(x * 100) / 100;

const te = tempEnv({ GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' });
const ws = join(te.dir, 'ws');
mkdirSync(join(ws, '.git'), { recursive: true });
const d = await startDaemon({ te });
try {
  await warmedUp(d.paths);
  const variants: Record<string, { argv: string[]; env: Record<string, string> }> = {
    'node -e 0': { argv: [process.execPath, '-e', '0'], env: te.env },
    'native, session sandbox (joined)': { argv: [GATE_SH, '-c', 'true'], env: te.env },
    'native, own sandbox (GATE_SESSION_SANDBOX=off)': { argv: [GATE_SH, '-c', 'true'], env: { ...te.env, GATE_SESSION_SANDBOX: 'off' } },
    'node, session sandbox (joined)': { argv: [GATE_SH, '-c', 'true'], env: { ...te.env, GATE_SH_NODE: '1' } },
    'node, own sandbox (GATE_SESSION_SANDBOX=off)': { argv: [GATE_SH, '-c', 'true'], env: { ...te.env, GATE_SH_NODE: '1', GATE_SESSION_SANDBOX: 'off' } },
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const once = (v: { argv: string[]; env: Record<string, string> }): number => {
    const t0 = performance.now();
    const r = spawnSync(v.argv[0], v.argv.slice(1), { cwd: ws, env: v.env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${v.argv.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return ms;
  };
  // warm: the session sandbox is made by the first joining run, the daemon's caches filled
  for (const v of Object.values(variants)) for (let i = 0; i < 3; i++) once(v);
  const loadBefore = loadavg().map(r2);
  for (let round = 0; round < ROUNDS; round++) {
    // a different order each round, so no variant always follows the same one
    const names = Object.keys(variants);
    const shift = round % names.length;
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) times[name].push(once(variants[name]));
  }
  const loadAfter = loadavg().map(r2);
  const node = q(times['node -e 0'], 0.5);
  const figures: Record<string, unknown> = { rounds: ROUNDS, load_average_before: loadBefore, load_average_after: loadAfter };
  for (const [name, xs] of Object.entries(times)) figures[name] = { p50_ms: r2(q(xs, 0.5)), p90_ms: r2(q(xs, 0.9)), over_node_e_0: r2(q(xs, 0.5) / node) };
  for (const entry of ['native', 'node']) {
    const joined = q(times[`${entry}, session sandbox (joined)`], 0.5);
    const own = q(times[`${entry}, own sandbox (GATE_SESSION_SANDBOX=off)`], 0.5);
    figures[`${entry}: joined / own, p50`] = r2(joined / own);
  }
  console.log(JSON.stringify(figures));
} finally {
  await d.stop();
  te.cleanup();
}
