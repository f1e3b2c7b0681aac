/**
 * Issue 19's MCP figure: a `shell` tool call to `gate mcp` next to one to OpenAI's codex-shell-tool-mcp,
 * on the same 10 agent scripts, same workspace, same HOME, in the same run, alternating call by call (the
 * machine is shared), in danger-full-access and in workspace-write (the peer then needs Codex's
 * codex-linux-sandbox: the `codex` binary of the same release, started under that name). Both peers are
 * installed from npm into scratch/ on first use (pinned) and kept. A write outside the workspace is tried
 * on both in workspace-write, so a figure is never of an unsandboxed run. The load average is read before
 * and after. Median ms per call; `ratio` is gate / peer. `gate_node_spawn_ms` is the same gate mcp spawning
 * its plans with Node's spawn (GATE_NODE_SPAWN=1) instead of the native addon's posix_spawn, in the same
 * rotation (`median_spawn_ratio`: addon / Node). In danger-full-access also the floor of such a call and
 * bash behind an MCP server with no gate (test/bench/mcp-floor.ts), against the peer: `median_floor_ratio`,
 * `median_bare_ratio`. Prints one JSON object; asserts no time.
 * BENCH_ROUNDS (default 7) rounds per script after one warm-up round.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { GATE, ROOT } from '../helpers/env.js';
import { type Floor, runBench, startFloor } from './helpers.js';
import { loadAverage, SCRIPTS, workspace } from './agent-scripts.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const VERSION = '0.97.0';
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number): number => Math.round(x * 10) / 10;
const r2 = (x: number): number => Math.round(x * 100) / 100;

/** The peer's launcher and a codex-linux-sandbox of the same release, installed into scratch/ on first use. */
function peerInstall(): { server: string; linuxSandbox: string } {
  const dir = join(ROOT, 'scratch', 'bench', `codex-shell-tool-mcp@${VERSION}`);
  const server = join(dir, 'node_modules', '@openai', 'codex-shell-tool-mcp', 'bin', 'mcp-server.js');
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  const codex = join(dir, 'node_modules', '@openai', 'codex', 'vendor', `${arch}-unknown-linux-musl`, 'codex', 'codex');
  if (!existsSync(server) || !existsSync(codex)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"name":"gate-sh-bench-peer","private":true}\n');
    const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `@openai/codex-shell-tool-mcp@${VERSION}`, `@openai/codex@${VERSION}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0 || !existsSync(server) || !existsSync(codex))
      throw new Error(`could not install @openai/codex-shell-tool-mcp@${VERSION} and @openai/codex@${VERSION} into ${dir}`);
  }
  // Codex's sandbox helper is its own binary started as codex-linux-sandbox (it dispatches on argv[0])
  const linuxSandbox = join(dir, 'bin', 'codex-linux-sandbox');
  if (!existsSync(linuxSandbox)) {
    mkdirSync(join(dir, 'bin'), { recursive: true });
    symlinkSync(codex, linuxSandbox);
  }
  return { server, linuxSandbox };
}

async function connect(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  await c.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }));
  return c;
}

interface Result {
  exit_code: number;
  output: string;
}

async function shell(c: Client, command: string, ws: string): Promise<{ ms: number; r: Result }> {
  const t0 = performance.now();
  const m = await c.callTool({ name: 'shell', arguments: { command, workdir: ws } });
  const ms = performance.now() - t0;
  const text = (m.content as { text?: string }[])[0]?.text ?? '';
  if (m.isError) throw new Error(`shell ${command}: ${text.slice(0, 300)}`);
  return { ms, r: JSON.parse(text) as Result };
}

type Mode = 'danger-full-access' | 'workspace-write';

/** In danger-full-access, two more servers in the same rotation (test/bench/mcp-floor.ts): the floor (a
 * pre-flight's round trip and a kernel layer answering every exec at once, none of gate-sh's work) and a
 * server that runs bash with no gate at all; both start their calls as gate mcp does. */
interface Others {
  floor: Floor;
}

async function compare(mode: Mode, d: DaemonProc, peer: { server: string; linuxSandbox: string }, others: Others | null): Promise<Record<string, unknown>> {
  const ws = workspace(d.te.dir, d.te.env);
  // the peer refuses to start without its CODEX_HOME (its rules folder); both read the same, empty one
  mkdirSync(d.te.env.CODEX_HOME, { recursive: true });
  const gate = await connect(process.execPath, [GATE, 'mcp'], { ...d.te.env, GATE_NO_AUTOSTART: '1' });
  // the same server spawning its plans with Node's spawn instead of the addon's posix_spawn (A/B)
  const gateNode = await connect(process.execPath, [GATE, 'mcp'], { ...d.te.env, GATE_NO_AUTOSTART: '1', GATE_NODE_SPAWN: '1' });
  const other = await connect(process.execPath, [peer.server], d.te.env);
  const floorServer = fileURLToPath(new URL('./mcp-floor.js', import.meta.url));
  const floor = others ? await connect(process.execPath, [floorServer, others.floor.program, others.floor.sock], d.te.env) : null;
  const bare = others ? await connect(process.execPath, [floorServer], d.te.env) : null;
  // /tmp and TMPDIR not writable: the workspace (under /tmp here) is, the check's target beside it is not
  const policy =
    mode === 'workspace-write'
      ? { type: 'workspace-write', writable_roots: [ws], network_access: false, exclude_tmpdir_env_var: true, exclude_slash_tmp: true }
      : { type: 'danger-full-access' };
  const state = { sandboxPolicy: policy, sandboxCwd: ws, codexLinuxSandboxExe: peer.linuxSandbox };
  try {
    // the same policy on both sides (gate's daemon already runs in it)
    for (const c of [gate, gateNode, other]) await c.request({ method: 'codex/sandbox-state/update', params: state } as never, EmptyResultSchema);
    const out: Record<string, unknown> = { load_before: loadAverage() };
    if (mode === 'workspace-write') {
      // both sandboxes are on: a write outside the workspace fails and leaves nothing
      const check: Record<string, boolean> = {};
      for (const [name, c] of [['gate', gate], ['peer', other]] as const) {
        const target = join(d.te.dir, `outside-${name}`);
        // the peer answers a sandbox denial with a tool error, gate with the failed run's status
        const failed = await shell(c, `echo x > ${target}`, ws).then(({ r }) => r.exit_code !== 0, () => true);
        check[`${name}_write_outside_refused`] = failed && !existsSync(target);
      }
      out.sandbox_check = check;
    }
    const rows: Record<string, unknown>[] = [];
    for (const s of SCRIPTS) {
      const g: number[] = [];
      const p: number[] = [];
      const n: number[] = [];
      const f: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < ROUNDS + 1; i++) {
        // the order rotates, so no side always runs right after another
        const sides: [Client, number[]][] = [[gate, g], [other, p], [gateNode, n]];
        if (floor && bare) sides.push([floor, f], [bare, b]);
        const order = sides.map((_, k) => sides[(k + i) % sides.length]);
        const outputs: string[] = [];
        for (const [c, into] of order) {
          const { ms, r } = await shell(c, s, ws);
          if (r.exit_code !== 0) throw new Error(`${c === other ? 'peer' : 'gate'}: ${s} exited ${r.exit_code}: ${r.output.slice(0, 300)}`);
          outputs.push(r.output);
          if (i > 0) into.push(ms);
        }
        // the same script gives the same output on both (git status, ls -la differ only in what changed meanwhile)
        const differ = outputs.some((o) => o !== outputs[0]);
        if (i === 0 && differ && !/^(ls|git status)/.test(s)) throw new Error(`outputs differ for ${s}: ${JSON.stringify(outputs)}`);
      }
      const ratio = r2(median(g) / median(p));
      const more = floor
        ? { floor_ms: r1(median(f)), floor_ratio: r2(median(f) / median(p)), bare_ms: r1(median(b)), bare_ratio: r2(median(b) / median(p)) }
        : {};
      rows.push({ script: s, gate_ms: r1(median(g)), peer_ms: r1(median(p)), ratio, gate_node_spawn_ms: r1(median(n)), ...more });
    }
    // floor / peer and bare / peer, median over the scripts: below 1, the floor leaves gate-sh room to beat the peer
    const floorRatios = floor
      ? { median_floor_ratio: median(rows.map((r) => r.floor_ratio as number)), median_bare_ratio: median(rows.map((r) => r.bare_ratio as number)) }
      : {};
    const ratios = rows.map((r) => r.ratio as number);
    const spawnRatios = rows.map((r) => (r.gate_ms as number) / (r.gate_node_spawn_ms as number));
    return {
      ...out,
      rows,
      median_ratio: median(ratios),
      max_ratio: Math.max(...ratios),
      // gate with the addon's spawn / gate with Node's spawn, median over the scripts
      median_spawn_ratio: r2(median(spawnRatios)),
      ...floorRatios,
      load_after: loadAverage(),
    };
  } finally {
    await gate.close();
    await gateNode.close();
    await other.close();
    await floor?.close();
    await bare?.close();
  }
}

runBench(async () => {
  const peer = peerInstall();
  const out: Record<string, unknown> = { peer: `@openai/codex-shell-tool-mcp@${VERSION}`, rounds: ROUNDS };
  const floor = await startFloor();
  try {
    for (const mode of ['danger-full-access', 'workspace-write'] as const) {
      const d = await startDaemon({ env: { GATE_SANDBOX_MODE: mode, GATE_APPROVAL_POLICY: 'on-request' } });
      try {
        out[mode] = await compare(mode, d, peer, mode === 'danger-full-access' ? { floor } : null);
      } finally {
        await d.stop();
        d.te.cleanup();
      }
    }
  } finally {
    floor.stop();
  }
  return out;
});
