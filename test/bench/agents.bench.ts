/**
 * Per agent tool call, the agent's wall time with gate-sh vs with plain bash: the same scripted
 * conversation (N allowed calls, `git status && echo ok`) with the real CLIs (test/agents/, pinned, cached
 * in scratch/agents/), runs alternating which side goes first. A tool call's time is from the fake model
 * sending the call to the agent's next request carrying its result (test/agents/fake-model.ts), so it
 * includes the agent's own overhead around the shell. Prints one JSON object (npm run bench agents;
 * GATE_BENCH_AGENTS=gemini,codex for some agents only).
 */
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { codexMcpResult, gate, runAgent, scratch, type Scratch } from '../agents/helpers.js';
import type { PinnedAgent } from '../agents/install.js';

const CALLS = Number(process.env.GATE_BENCH_AGENT_CALLS || 4);
const ROUNDS = Number(process.env.GATE_BENCH_AGENT_ROUNDS || 3);
const COMMAND = 'git status && echo ok';

interface Mode {
  name: string;
  agent: PinnedAgent;
  /** set the scratch up for this mode; returns extra agent arguments */
  prepare(s: Scratch): string[];
}

const MODES: Mode[] = [
  { name: 'bash', agent: 'claude-code', prepare: () => ['--allowedTools', 'Bash'] },
  { name: 'gate-shell', agent: 'claude-code', prepare: (s) => (setup(s, ['claude-code']), ['--allowedTools', 'Bash']) },
  { name: 'gate-hook', agent: 'claude-code', prepare: (s) => (setup(s, ['claude-code', '--route', 'hook']), []) },
  { name: 'bash', agent: 'gemini', prepare: () => ['--yolo'] },
  { name: 'gate-hook', agent: 'gemini', prepare: (s) => (setup(s, ['gemini', '--route', 'hook']), ['--yolo']) },
  {
    name: 'gate-shell',
    agent: 'gemini',
    prepare: (s) => {
      setup(s, ['gemini', '--route', 'shell']);
      s.env.PATH = `${join(s.home, '.gate-sh', 'bin')}:${s.env.PATH}`;
      return ['--yolo'];
    },
  },
  // Codex's own sandbox cannot start here (it cannot write its helper under /tmp): plain runs bypass it
  { name: 'bash', agent: 'codex', prepare: () => ['--dangerously-bypass-approvals-and-sandbox'] },
  { name: 'gate-mcp', agent: 'codex', prepare: (s) => (setup(s, ['codex']), []) },
];

function setup(s: Scratch, args: string[]): void {
  const r = gate(s, ['setup', ...args]);
  if (r.code !== 0) throw new Error(`gate setup ${args.join(' ')}: ${r.stderr}`);
}

function stats(xs: number[]): { n: number; p50: number; mean: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    n: s.length,
    p50: r(s[Math.floor(s.length / 2)] ?? NaN),
    mean: r(s.reduce((a, b) => a + b, 0) / (s.length || 1)),
    min: r(s[0] ?? NaN),
    max: r(s[s.length - 1] ?? NaN),
  };
}

async function main(): Promise<void> {
  // the machine's load says how far these figures can be trusted (node -e 0 alone is ~110 ms when idle)
  const out: Record<string, unknown> = {
    calls_per_run: CALLS,
    rounds: ROUNDS,
    command: COMMAND,
    loadavg_at_start: loadavg().map((x) => Math.round(x * 10) / 10),
  };
  const only = process.env.GATE_BENCH_AGENTS?.split(',');
  for (const agent of (['claude-code', 'gemini', 'codex'] as PinnedAgent[]).filter((a) => !only || only.includes(a))) {
    const modes = MODES.filter((m) => m.agent === agent);
    const per: Record<string, { callMs: number[]; ok: number; calls: number; failed?: string }> = {};
    for (const m of modes) per[m.name] = { callMs: [], ok: 0, calls: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? modes : [...modes].reverse(); // alternate which side goes first
      for (const m of order) {
        const s = scratch(agent);
        try {
          const extra = m.prepare(s);
          // one untimed call first: the daemon and the agent's caches are warm for the timed ones
          const run = await runAgent(agent, s, Array.from({ length: CALLS + 1 }, () => COMMAND), extra, 300_000);
          const p = per[m.name];
          p.callMs.push(...run.callMs.slice(1));
          p.calls += run.results.length - 1;
          const text = (out: string) => {
            try {
              return agent === 'codex' ? codexMcpResult(out).output : out;
            } catch {
              return out;
            }
          };
          const ran = (out: string) => /^ok$/m.test(text(out)) && !/denied|approval needed/.test(out);
          p.ok += run.results.slice(1).filter((r) => ran(r.output)).length;
          p.failed ??= run.results.slice(1).find((r) => !ran(r.output))?.output.slice(0, 300);
        } finally {
          s.cleanup();
        }
      }
    }
    const res: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(per))
      res[name] = { ...stats(p.callMs), calls_that_ran: `${p.ok}/${p.calls}`, ...(p.failed ? { a_call_that_did_not_run: p.failed } : {}) };
    const base = (res.bash as { p50: number }).p50;
    for (const name of Object.keys(res))
      if (name !== 'bash') (res[name] as Record<string, unknown>).p50_over_bash_ms = Math.round(((res[name] as { p50: number }).p50 - base) * 10) / 10;
    out[agent] = res;
  }
  out.loadavg_at_end = loadavg().map((x) => Math.round(x * 10) / 10);
  console.log(JSON.stringify(out));
}

await main();
