// Policy engine figures: 10,000-rule load time, evaluations/s on 1,000 rules, `gate policy check` start-up
// next to `node -e 0` measured in the same run. Prints one JSON object on its last line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicy } from '../../src/rules/load.js';
import { GATE } from '../helpers/env.js';

const PROGRAMS = Array.from({ length: 200 }, (_, k) => `tool${k}`);

function rulesText(n: number): string {
  const lines: string[] = ['# generated'];
  for (let k = 0; k < n; k++) {
    const prog = PROGRAMS[k % PROGRAMS.length];
    const d = ['allow', 'prompt', 'forbidden'][k % 3];
    lines.push(k % 4 === 0
      ? `prefix_rule(\n    pattern = ["${prog}", ["sub${k % 7}", "alt${k % 5}"], "arg${k}"],\n    decision = "${d}",\n    justification = "rule ${k}",\n)`
      : `prefix_rule(pattern=["${prog}", "sub${k % 7}"], decision="${d}")`);
  }
  lines.push('host_executable(name = "tool1", paths = ["/usr/bin/tool1"])');
  return lines.join('\n') + '\n';
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'pbench-'));
try {
  // 1. load a 10,000-rule file (read + parse + index), median of 7
  const big = join(dir, 'big.rules');
  writeFileSync(big, rulesText(10_000));
  const loads: number[] = [];
  const loadsCpu: number[] = []; // CPU time too: wall time suffers when the machine is shared
  for (let i = 0; i < 7; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const p = loadPolicy({ includeDefaults: false, extraFiles: [big] });
    loads.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    loadsCpu.push((c.user + c.system) / 1000);
    if (p.ruleCount < 10_000) throw new Error('rules missing');
  }

  // 2. evaluations per second on a 1,000-rule policy (Codex CLI semantics and the daemon's hardened mode)
  const small = join(dir, 'small.rules');
  writeFileSync(small, rulesText(1_000));
  const policy = loadPolicy({ includeDefaults: false, extraFiles: [small] });
  const commands = Array.from({ length: 1000 }, (_, k) => {
    const c = [k % 10 === 0 ? `/usr/bin/tool${k % 250}` : `tool${k % 250}`, `sub${k % 7}`, `arg${k}`];
    return c;
  });
  const rate = (hardened: boolean) => {
    const opts = { resolveHostExecutables: true, hardened };
    let n = 0;
    let sink = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < 1000) {
      for (let k = 0; k < commands.length; k++) sink += policy.check(commands[k], opts).matchedRules.length;
      n += commands.length;
    }
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    if (sink < 0) throw new Error('unreachable');
    return { wall: Math.round(n / secs), cpu: Math.round(n / ((c.user + c.system) / 1e6)) };
  };
  rate(false); // warm-up
  const evalsCodex = rate(false);
  const evalsHardened = rate(true);

  // 3. start-up: `gate policy check` vs `node -e 0`, interleaved, median of 15 each
  const gateRuns: number[] = [];
  const nodeRuns: number[] = [];
  const rulesFile = join(dir, 'cli.rules');
  writeFileSync(rulesFile, 'prefix_rule(pattern=["git", "status"], decision="prompt")\n');
  const time = (args: string[]) => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 15; i++) {
    nodeRuns.push(time(['-e', '0']));
    gateRuns.push(time([GATE, 'policy', 'check', '--rules', rulesFile, 'git', 'status']));
  }
  const gateMs = median(gateRuns);
  const nodeMs = median(nodeRuns);
  console.log(
    JSON.stringify({
      load_10k_rules_ms: +median(loads).toFixed(1),
      load_10k_rules_cpu_ms: +median(loadsCpu).toFixed(1),
      load_10k_rules_first_ms: +loads[0].toFixed(1),
      load_10k_rules_target_ms: 150,
      evals_per_sec_1k_rules: evalsCodex.wall,
      evals_per_cpu_sec_1k_rules: evalsCodex.cpu,
      evals_per_sec_1k_rules_hardened: evalsHardened.wall,
      evals_per_cpu_sec_1k_rules_hardened: evalsHardened.cpu,
      evals_per_sec_target: 500_000,
      gate_policy_check_ms: +gateMs.toFixed(1),
      node_e_0_ms: +nodeMs.toFixed(1),
      startup_ratio: +(gateMs / nodeMs).toFixed(2),
      startup_ratio_target: 1.3,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
