/**
 * Script analysis cost, in-process, warm. Prints one JSON object on its last line.
 * - typical: a 5-subcommand agent script (target ≤ 2 ms median)
 * - 10k: 10,000 subcommands (target ≤ 500 ms); over the second parser's cap, so complex by design
 * - at_cap: the largest script that can still be plain (32 KiB, both parsers)
 * - 10 MB: over maxBytes, complex without parsing
 */
import { analyzeScript, SECOND_OPINION_MAX_BYTES } from '../../src/script/analyze.js';

/** Wall-clock median and p90, plus the median CPU time (user+system): on a busy machine, wall time
 * also counts time spent waiting for a core, CPU time does not. */
function time(f: () => unknown, runs: number): { median: number; p90: number; cpu_median: number } {
  const t: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    const u = process.cpuUsage();
    f();
    const d = process.cpuUsage(u);
    t.push(performance.now() - s);
    c.push((d.user + d.system) / 1000);
  }
  t.sort((a, b) => a - b);
  c.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { median: r(t[Math.floor(runs / 2)]), p90: r(t[Math.floor(runs * 0.9)]), cpu_median: r(c[Math.floor(runs / 2)]) };
}

const typical = 'git status && npm test -- --grep "fast tests" | tail -n 20; echo "done" && ls -la src';
const lines = (n: number) => Array.from({ length: n }, (_, i) => `echo line${i} "arg ${i}" && true`).join('\n');
const big = lines(5_000); // 10,000 subcommands
let n = 1;
while (Buffer.byteLength(lines(n + 1)) <= SECOND_OPINION_MAX_BYTES) n++;
const atCap = lines(n);
const huge = 'echo hello world && true\n'.repeat(420_000);

for (let i = 0; i < 300; i++) analyzeScript(typical); // warm up
const kind = (s: string) => analyzeScript(s).kind;
const result = {
  typical_5_subcommands_ms: { ...time(() => analyzeScript(typical), 500), target: 2, kind: kind(typical) },
  subcommands_10k_ms: { ...time(() => analyzeScript(big), 5), target: 500, bytes: big.length, kind: kind(big) },
  plain_at_second_parser_cap_ms: { ...time(() => analyzeScript(atCap), 5), bytes: atCap.length, subcommands: 2 * n, kind: kind(atCap) },
  script_10mb_ms: { ...time(() => analyzeScript(huge), 5), bytes: huge.length, kind: kind(huge) },
};
console.log(JSON.stringify(result));
