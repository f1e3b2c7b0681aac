/**
 * Decision speed: parse + evaluate scripts against a 1,000-rule policy, warm, in-process.
 * Targets: a typical 5-subcommand script ≤ 2 ms (p50), a 10,000-subcommand script ≤ 500 ms.
 * Also the exec-gate decision per intercepted exec. Prints one JSON object on its last line.
 * Wall-clock figures, plus CPU time (user+system) for the two targets: on a busy machine the wall clock
 * also counts time spent waiting for a core.
 */
import { performance } from 'node:perf_hooks';
import { parsePolicy } from '../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../src/sandbox/policy.js';
import { decideInvocation, type DecideContext } from '../../src/decide/script.js';
import { decideIntercepted } from '../../src/decide/intercepted.js';
import { analyzeScript } from '../../src/script/analyze.js';

function policyText(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = i % 10 === 0 ? 'forbidden' : i % 3 === 0 ? 'prompt' : 'allow';
    lines.push(`prefix_rule(pattern=["tool${i % 200}", "sub${i}", ["a", "b"]], decision="${d}")`);
  }
  lines.push('prefix_rule(pattern=["git", "status"])', 'prefix_rule(pattern=["npm", "test"])', 'prefix_rule(pattern=["rm"], decision="forbidden")');
  return lines.join('\n');
}

const ctx: DecideContext = {
  policy: parsePolicy([{ path: 'bench.rules', text: policyText(1000) }]),
  approvalPolicy: 'on-request',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
};

function p50(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function time(fn: () => unknown, runs: number, warm: number): number[] {
  for (let i = 0; i < warm; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out;
}

const typical = "git status && npm test -- --watch=false | tee out.log; timeout 60 cargo build --release || echo 'build failed'";
/** CPU time (user+system) of one call: on a busy machine wall time also counts waiting for a core. */
function cpu(fn: () => unknown): number {
  const u = process.cpuUsage();
  fn();
  const d = process.cpuUsage(u);
  return (d.user + d.system) / 1000;
}

let n = 0;
// Interleaved, so that load on the machine hits both the same way.
const small: number[] = [];
const smallParse: number[] = [];
const smallCpu: number[] = [];
for (let i = 0; i < 350; i++) {
  const [a] = time(() => decideInvocation(['bash', '-lc', typical + ' #' + n++], ctx), 1, 0);
  const [b] = time(() => analyzeScript(typical + ' #' + n++), 1, 0);
  const c = cpu(() => decideInvocation(['bash', '-lc', typical + ' #' + n++], ctx));
  if (i >= 50) small.push(a), smallParse.push(b), smallCpu.push(c);
}
const first = decideInvocation(['bash', '-lc', typical], ctx);
// The decision layer alone: the same five subcommands as bare argvs (no script parsing).
const parsed = analyzeScript(typical);
const subs = parsed.kind === 'plain' ? parsed.commands.map((c) => c.argv) : [];
const decideOnly = time(() => subs.forEach((argv) => decideInvocation(argv, ctx)), 2000, 200);

// 10,000 subcommands; the script analysis dominates, so it is timed on its own too (1 warm-up, 2 runs).
const big = Array.from({ length: 10_000 }, (_, i) => `echo a${i}`).join('; ');
const bigRuns = time(() => decideInvocation(['bash', '-lc', big], ctx), 2, 1);
const bigCpu = [cpu(() => decideInvocation(['bash', '-lc', big], ctx)), cpu(() => decideInvocation(['bash', '-lc', big], ctx))];
const bigParse = time(() => analyzeScript(big), 2, 0);
const bigResult = decideInvocation(['bash', '-lc', big], ctx);

const exec = time(() => decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', { ...ctx, env: { PATH: '/usr/bin:/bin', HOME: '/root' } }), 5000, 500);

console.log(
  JSON.stringify({
    typical_5_subcommands_ms_p50: +p50(small).toFixed(3),
    typical_5_subcommands_cpu_ms_p50: +p50(smallCpu).toFixed(3),
    typical_target_ms: 2,
    typical_analyze_only_ms_p50: +p50(smallParse).toFixed(3),
    typical_decide_only_ms_p50: +p50(decideOnly).toFixed(3),
    typical_subcommands: first.subcommands.length,
    typical_complex: first.complex,
    big_10000_subcommands_ms_p50: +p50(bigRuns).toFixed(1),
    big_10000_subcommands_cpu_ms_p50: +p50(bigCpu).toFixed(1),
    big_target_ms: 500,
    big_analyze_only_ms_p50: +p50(bigParse).toFixed(1),
    big_subcommands: bigResult.subcommands.length,
    big_complex: bigResult.complex,
    intercepted_exec_us_p50: +(p50(exec) * 1000).toFixed(1),
    rules: ctx.policy.ruleCount,
  }),
);
