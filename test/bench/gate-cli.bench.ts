/**
 * `gate` start-up now that its command line is yargs (issue 32): per call, next to `node -e 0`, taken in turn
 * with the order rotating each round — `gate --version` and `gate status --help` from the yargs program's
 * bundle with its code cache (what a person's command costs before its own work), the same from yargs'
 * module graph (GATE_NO_BUNDLE=1: what loading yargs as ESM costs), `gate policy check` (its own parser, no
 * yargs) and `gate-sh -c true` against a running daemon (yargs is never loaded on gate-sh's path; the figure
 * is here to compare with other builds). Whole process wall time, medians in ms; the load average is printed
 * with them. Prints one JSON object on its last line; nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE, GATE_SH } from '../helpers/env.js';
import { startDaemon } from '../helpers/daemon.js';
import { loadAverage } from './agent-scripts.js';
import { runBench } from './helpers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number): number => Math.round(x * 10) / 10;

runBench(async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_NO_AUTOSTART: '1' }, workspace: 'w' });
  try {
    const rules = join(d.te.dir, 'b.rules');
    writeFileSync(rules, 'prefix_rule(pattern=["git", "status"], decision="prompt")\n');
    const node = process.execPath;
    const sides: Record<string, { cmd: string; args: string[]; env?: Record<string, string> }> = {
      node_e_0: { cmd: node, args: ['-e', '0'] },
      gate_version: { cmd: node, args: [GATE, '--version'] },
      gate_status_help: { cmd: node, args: [GATE, 'status', '--help'] },
      gate_status_help_module_graph: { cmd: node, args: [GATE, 'status', '--help'], env: { GATE_NO_BUNDLE: '1' } },
      gate_policy_check: { cmd: node, args: [GATE, 'policy', 'check', '--rules', rules, 'git', 'status'] },
      gate_sh_c_true: { cmd: GATE_SH, args: ['-c', 'true'] },
    };
    const names = Object.keys(sides);
    const t: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
    const load_before = loadAverage();
    for (let i = 0; i < ROUNDS + 1; i++)
      for (let j = 0; j < names.length; j++) {
        const side = names[(i + j) % names.length];
        const { cmd, args, env } = sides[side];
        const t0 = performance.now();
        const r = spawnSync(cmd, args, { env: { ...d.env, ...env }, cwd: d.ws, encoding: 'utf8' });
        const ms = performance.now() - t0;
        if (r.status !== 0) throw new Error(`${side}: exit ${r.status} ${r.stderr}`);
        if (i > 0) t[side].push(ms); // the first round warms the daemon and the page cache
      }
    const m = Object.fromEntries(names.map((k) => [k, median(t[k])]));
    const over = (k: string) => r1(m[k] - m.node_e_0);
    return {
      rounds: ROUNDS,
      ...Object.fromEntries(names.map((k) => [`${k}_p50_ms`, r1(m[k])])),
      gate_status_help_over_node_ms: over('gate_status_help'),
      gate_status_help_module_graph_over_node_ms: over('gate_status_help_module_graph'),
      gate_policy_check_over_node_ms: over('gate_policy_check'),
      gate_sh_c_true_over_node_ms: over('gate_sh_c_true'),
      load_before,
      load_after: loadAverage(),
    };
  } finally {
    await d.close();
  }
});
