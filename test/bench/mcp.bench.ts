/**
 * MCP `shell` call latency for `true` (SDK Client over real stdio → `gate mcp` → gate-sh → daemon → bwrap)
 * next to a direct `gate-sh -lc true` spawned by this process, same daemon, same sandbox, interleaved. The
 * difference is dominated by machine noise (both spawn the same gate-sh), so the target is on what MCP itself
 * adds per call: total call time minus gate-sh's run as timed inside `gate mcp` ≤ 10 ms (p50).
 * Prints one JSON object on its last line.
 */
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { GATE, GATE_SH } from '../helpers/env.js';
import { startDaemon } from '../helpers/daemon.js';

const RUNS = 40;
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)];
const round = (x: number) => Math.round(x * 10) / 10;

const d = await startDaemon({ workspace: 'ws' });
const { env, ws } = d;
try {
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: { elicitation: {} } });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [GATE, 'mcp'], env, stderr: 'ignore' }));
  // Interleaved, so both paths see the same machine load.
  const direct: number[] = [];
  const mcp: number[] = [];
  const inServer: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    let t0 = performance.now();
    const r = spawnSync(GATE_SH, ['-lc', 'true'], { cwd: ws, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (i >= 5) direct.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`gate-sh -lc true exited ${r.status}: ${r.stderr}`);
    t0 = performance.now();
    const m = await client.callTool({ name: 'shell', arguments: { command: 'true', workdir: ws } });
    if (i >= 5) mcp.push(performance.now() - t0);
    const res = JSON.parse((m.content as { text: string }[])[0].text) as { exit_code: number; output: string; duration: { secs: number; nanos: number } };
    if (i >= 5) inServer.push(res.duration.secs * 1000 + res.duration.nanos / 1e6);
    if (res.exit_code !== 0) throw new Error(`MCP shell true exited ${res.exit_code}: ${JSON.stringify(res)}`);
  }
  await client.close();

  const overhead = pct(mcp, 0.5) - pct(direct, 0.5);
  const framing = pct(mcp.map((t, i) => t - inServer[i]), 0.5);
  console.log(
    JSON.stringify({
      runs: RUNS,
      direct_gate_sh_true: { p50_ms: round(pct(direct, 0.5)), p90_ms: round(pct(direct, 0.9)) },
      mcp_shell_true: { p50_ms: round(pct(mcp, 0.5)), p90_ms: round(pct(mcp, 0.9)) },
      mcp_minus_direct_p50_ms: round(overhead),
      // gate-sh's own run as timed inside gate mcp (spawn to close); the rest is MCP framing and stdio
      mcp_gate_sh_in_server_p50_ms: round(pct(inServer, 0.5)),
      mcp_framing_p50_ms: round(framing),
      target: { mcp_framing_p50_ms: 10, met: framing <= 10 },
    }),
  );
} finally {
  await d.close();
}
