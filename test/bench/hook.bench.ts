/**
 * `gate hook` per call, as an agent starts it before every shell command (`node bin/gate hook <agent>`, the
 * hook's JSON on stdin, one pre-flight against a running daemon): from its bundle with the build's V8 code
 * cache (bin/gate's fast path) next to the module graph it was built from (GATE_NO_BUNDLE=1, what every
 * call cost before) and `node -e 0`, the three taken in turn, the order rotating each round. Inputs: an
 * allowed command (Claude Code), a forbidden one (gemini-cli). Whole process wall time, medians in ms; the
 * load average is printed with them. Prints one JSON object on its last line; nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { GATE } from '../helpers/env.js';
import { startDaemon } from '../helpers/daemon.js';
import { loadAverage } from './agent-scripts.js';
import { runBench } from './helpers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const RULES =
  'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")\nprefix_rule(pattern=["git", "status"], decision="allow")\n';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number): number => Math.round(x * 10) / 10;

runBench(async () => {
  const d = await startDaemon({ rules: RULES, workspace: 'w' });
  try {
    const cases = {
      'claude-code allow': ['claude-code', JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'git status && echo ok' }, cwd: d.ws })],
      'gemini deny': ['gemini', JSON.stringify({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'rm -rf x' }, cwd: d.ws })],
    };
    const sides: Record<string, (agent: string) => { args: string[]; env: Record<string, string> }> = {
      bundled: (agent) => ({ args: [GATE, 'hook', agent], env: d.env }),
      module_graph: (agent) => ({ args: [GATE, 'hook', agent], env: { ...d.env, GATE_NO_BUNDLE: '1' } }),
      node_e_0: () => ({ args: ['-e', '0'], env: d.env }),
    };
    const load_before = loadAverage();
    const out: Record<string, Record<string, number>> = {};
    for (const [name, [agent, input]] of Object.entries(cases)) {
      const t: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
      const names = Object.keys(sides);
      for (let i = 0; i < ROUNDS + 1; i++) {
        for (let j = 0; j < names.length; j++) {
          const side = names[(i + j) % names.length];
          const { args, env } = sides[side](agent);
          const t0 = performance.now();
          const r = spawnSync(process.execPath, args, { env, input, encoding: 'utf8' });
          const ms = performance.now() - t0;
          if (r.status !== 0 || (side !== 'node_e_0' && !/"(allow|deny)"/.test(r.stdout)))
            throw new Error(`${side} ${name}: exit ${r.status} ${r.stdout}${r.stderr}`);
          if (i > 0) t[side].push(ms); // the first round warms the daemon and the page cache
        }
      }
      const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [`${k}_p50_ms`, r1(median(v))]));
      out[name] = {
        ...m,
        bundled_over_node_ms: r1(m.bundled_p50_ms - m.node_e_0_p50_ms),
        module_graph_over_node_ms: r1(m.module_graph_p50_ms - m.node_e_0_p50_ms),
        saved_per_call_ms: r1(m.module_graph_p50_ms - m.bundled_p50_ms),
      };
    }
    return { rounds: ROUNDS, ...out, load_before, load_after: loadAverage() };
  } finally {
    await d.close();
  }
});
