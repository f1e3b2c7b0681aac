/**
 * Issue 19's figures, side by side in one run, alternating (the machine is shared: each ratio's inputs
 * are taken in turn, per script). Prints one JSON object on its last line.
 * - per call: `gate-sh -lc S` (the native entry point) over 10 typical agent scripts next to `bash -lc S`
 *   (danger-full-access) and `bwrap <the plan's own mounts> bash -lc S` (workspace-write), with the Node
 *   gate-sh (GATE_SH_NODE=1) for reference; ratio of medians per script, and the median of those ratios
 * - MCP: a `shell` tool call to `gate mcp` next to one to OpenAI's codex-shell-tool-mcp (installed from
 *   npm into scratch/, pinned), same scripts, same workspace, alternating
 * - cold start: the first `gate-sh -c true` with no daemon (autostart), next to `gate daemon start` alone
 * - the daemon's resident memory before and after 10,000 plan pre-flights (plus run-finished each)
 * Timings are medians in ms. Nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { GATE, GATE_SH, ROOT, tempEnv } from '../helpers/env.js';
import { startDaemon, warmedUp, type DaemonProc } from '../daemon/helpers.js';
import { RequestClient } from '../../src/protocol/client.js';
import { gatePaths } from '../../src/protocol/paths.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number): number => Math.round(x * 10) / 10;
const r2 = (x: number): number => Math.round(x * 100) / 100;

const SCRIPTS = [
  'git status',
  'cat README.md | head -5',
  'for f in *.md; do wc -l "$f"; done',
  'ls -la',
  'grep -rn TODO src | head -3',
  'echo hello && pwd',
  "find . -name '*.ts' | wc -l",
  'sed -n 1,3p README.md',
  'git log --oneline -3',
  'cat package.json | wc -c',
];

function workspace(dir: string, env: Record<string, string>): string {
  const ws = join(dir, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'README.md'), '# demo\n\nline 3\nline 4\nline 5\nline 6\n');
  writeFileSync(join(ws, 'NOTES.md'), 'a\nb\n');
  writeFileSync(join(ws, 'package.json'), '{"name":"demo","version":"1.0.0"}\n');
  writeFileSync(join(ws, 'src', 'a.ts'), '// TODO: one\nexport const a = 1;\n');
  const git = (...a: string[]) => spawnSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', ...a], { cwd: ws, env, stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'one');
  return ws;
}

function time(cmd: string, args: string[], o: { env: Record<string, string>; cwd: string }): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env: o.env, cwd: o.cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** The bwrap argv the daemon's plan uses for this script (the sandbox alone: without the exec gate). */
async function sandboxArgv(env: Record<string, string>, ws: string, script: string): Promise<{ program: string; args: string[] }> {
  const c = RequestClient.open(gatePaths(env));
  try {
    const plan = { argv: ['-lc', script], argv0: GATE_SH, env: Object.entries(env).map(([k, v]) => `${k}=${v}`), fds: [], shims: join(ROOT, 'shims') };
    const reply = (await c.request({ type: 'preflight', shell: 'bash', flag: '-lc', script, cwd: ws, pid: process.pid, sandbox_permissions: 'use_default', plan })) as { plan?: { program?: string; args?: string[] } };
    const p = reply.plan;
    if (!p?.program || !p.args) throw new Error(`no plan for ${script}: ${JSON.stringify(reply)}`);
    const sep = p.args.indexOf('--');
    const mounts = p.args.slice(0, sep);
    const shims = mounts.findIndex((a, i) => a === '--ro-bind' && mounts[i + 1] === join(ROOT, 'shims'));
    if (shims >= 0) mounts.splice(shims, 3);
    return { program: p.program, args: [...mounts, '--', '/bin/bash', '-lc', script] };
  } finally {
    c.close();
  }
}

interface Row {
  script: string;
  base_ms: number;
  native_ms: number;
  node_ms: number;
  ratio: number;
}

async function perCall(mode: 'danger-full-access' | 'workspace-write', d: DaemonProc, ws: string): Promise<{ rows: Row[]; median_ratio: number; max_ratio: number }> {
  const env = { ...d.te.env, GATE_NO_AUTOSTART: '1' };
  const rows: Row[] = [];
  for (const s of SCRIPTS) {
    const base = mode === 'workspace-write' ? await sandboxArgv(env, ws, s) : { program: '/bin/bash', args: ['-lc', s] };
    const b: number[] = [];
    const n: number[] = [];
    const j: number[] = [];
    for (let i = 0; i < ROUNDS + 1; i++) {
      // the order rotates, so no side always runs right after another
      const order = [0, 1, 2].map((k) => (k + i) % 3);
      for (const k of order) {
        const ms =
          k === 0 ? time(base.program, base.args, { env: d.te.env, cwd: ws }) : k === 1 ? time(GATE_SH, ['-lc', s], { env, cwd: ws }) : time(GATE_SH, ['-lc', s], { env: { ...env, GATE_SH_NODE: '1' }, cwd: ws });
        if (i > 0) (k === 0 ? b : k === 1 ? n : j).push(ms);
      }
    }
    rows.push({ script: s, base_ms: r1(median(b)), native_ms: r1(median(n)), node_ms: r1(median(j)), ratio: r2(median(n) / median(b)) });
  }
  return { rows, median_ratio: median(rows.map((r) => r.ratio)), max_ratio: Math.max(...rows.map((r) => r.ratio)) };
}

const PEER = { pkg: '@openai/codex-shell-tool-mcp', version: '0.97.0' };

/** The peer's launcher, installed from npm into scratch/bench/ on first use (kept between runs). */
function peerServer(): string {
  const dir = join(ROOT, 'scratch', 'bench', `codex-shell-tool-mcp@${PEER.version}`);
  const bin = join(dir, 'node_modules', '@openai', 'codex-shell-tool-mcp', 'bin', 'mcp-server.js');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"name":"gate-sh-bench-peer","private":true}\n');
    const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `${PEER.pkg}@${PEER.version}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0 || !existsSync(bin)) throw new Error(`could not install ${PEER.pkg}@${PEER.version} into ${dir}`);
  }
  return bin;
}

async function mcpClient(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' }, { capabilities: { elicitation: {} } });
  await c.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }));
  return c;
}

async function call(c: Client, command: string, ws: string): Promise<number> {
  const t0 = performance.now();
  const m = await c.callTool({ name: 'shell', arguments: { command, workdir: ws } });
  const ms = performance.now() - t0;
  const text = (m.content as { text?: string }[])[0]?.text ?? '';
  if (m.isError || !/exit_code"?\s*[:=]\s*0\b|^Exit code: 0/m.test(text)) throw new Error(`shell ${command}: ${text.slice(0, 300)}`);
  return ms;
}

async function mcp(mode: 'danger-full-access' | 'workspace-write', d: DaemonProc, ws: string): Promise<Record<string, unknown>> {
  const env = { ...d.te.env, GATE_NO_AUTOSTART: '1' };
  const gate = await mcpClient(process.execPath, [GATE, 'mcp'], env);
  let peer: Client | undefined;
  try {
    peer = await mcpClient(process.execPath, [peerServer()], d.te.env);
    const policy = mode === 'workspace-write' ? { type: 'workspace-write', writable_roots: [ws], network_access: false, exclude_tmpdir_env_var: false, exclude_slash_tmp: false } : { type: 'danger-full-access' };
    await peer.request({ method: 'codex/sandbox-state/update', params: { sandboxPolicy: policy, sandboxCwd: ws } }, EmptyResultSchema);
    const rows: { script: string; gate_ms?: number; peer_ms?: number; ratio?: number; error?: string }[] = [];
    for (const s of SCRIPTS) {
      const g: number[] = [];
      const p: number[] = [];
      try {
        for (let i = 0; i < ROUNDS + 1; i++) {
          const first = i % 2 === 0;
          const a = first ? await call(gate, s, ws) : await call(peer, s, ws);
          const b = first ? await call(peer, s, ws) : await call(gate, s, ws);
          if (i > 0) g.push(first ? a : b), p.push(first ? b : a);
        }
        rows.push({ script: s, gate_ms: r1(median(g)), peer_ms: r1(median(p)), ratio: r2(median(g) / median(p)) });
      } catch (e) {
        // one script the peer (or gate) cannot run is recorded, not the end of the comparison
        rows.push({ script: s, error: (e as Error).message.slice(0, 300) });
        await peer.close().catch(() => undefined);
        peer = await mcpClient(process.execPath, [peerServer()], d.te.env);
        await peer.request({ method: 'codex/sandbox-state/update', params: { sandboxPolicy: policy, sandboxCwd: ws } }, EmptyResultSchema);
      }
    }
    const ratios = rows.flatMap((r) => (r.ratio === undefined ? [] : [r.ratio]));
    return { peer: `${PEER.pkg}@${PEER.version}`, rows, median_ratio: ratios.length ? median(ratios) : null, max_ratio: ratios.length ? Math.max(...ratios) : null };
  } catch (e) {
    return { peer: `${PEER.pkg}@${PEER.version}`, error: (e as Error).message.slice(0, 400) };
  } finally {
    await gate.close();
    await peer?.close();
  }
}

/** First call with no daemon: gate-sh hands over to Node, which autostarts one. Next to `gate daemon start`. */
async function coldStart(): Promise<Record<string, unknown>> {
  const first: number[] = [];
  const start: number[] = [];
  for (let i = 0; i < 5; i++) {
    for (const which of i % 2 ? ['start', 'first'] : ['first', 'start']) {
      const te = tempEnv({ GATE_SANDBOX_MODE: 'danger-full-access' });
      try {
        const t0 = performance.now();
        const r = which === 'first' ? spawnSync(GATE_SH, ['-c', 'true'], { env: te.env, stdio: 'ignore' }) : spawnSync(process.execPath, [GATE, 'daemon', 'start'], { env: te.env, stdio: 'ignore' });
        const ms = performance.now() - t0;
        if (r.status !== 0) throw new Error(`${which} exited ${r.status}`);
        (which === 'first' ? first : start).push(ms);
      } finally {
        spawnSync(process.execPath, [GATE, 'daemon', 'stop'], { env: te.env, stdio: 'ignore' });
        te.cleanup();
      }
    }
  }
  return { first_call_ms: r1(median(first)), daemon_start_alone_ms: r1(median(start)), runs: first.length };
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : -1;
}

async function memory(d: DaemonProc, ws: string): Promise<Record<string, unknown>> {
  const env = { ...d.te.env, GATE_NO_AUTOSTART: '1' };
  const pid = Number(readFileSync(d.paths.pidFile, 'utf8').trim());
  const before = rssKiB(pid);
  const c = RequestClient.open(d.paths);
  const planEnv = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const t0 = performance.now();
  const CALLS = 10_000;
  try {
    for (let i = 0; i < CALLS; i++) {
      const s = SCRIPTS[i % SCRIPTS.length];
      const reply = (await c.request({ type: 'preflight', shell: 'bash', flag: '-lc', script: s, cwd: ws, pid: process.pid, sandbox_permissions: 'use_default', plan: { argv: ['-lc', s], argv0: GATE_SH, env: planEnv, fds: [], shims: join(ROOT, 'shims') } })) as { run_id: string };
      c.notify({ type: 'run-finished', run_id: reply.run_id, exit_status: 0, duration_ms: 1 });
    }
  } finally {
    c.close();
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  return { calls: CALLS, rss_before_mib: r1(before / 1024), rss_after_mib: r1(rssKiB(pid) / 1024), per_call_ms: r2(ms / CALLS) };
}

const out: Record<string, unknown> = { rounds: ROUNDS };
const dfa = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'on-request' } });
const wsw = await startDaemon({ env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request' } });
try {
  await Promise.all([warmedUp(dfa.paths), warmedUp(wsw.paths)]);
  const wsDfa = workspace(dfa.te.dir, dfa.te.env);
  const wsWsw = workspace(wsw.te.dir, wsw.te.env);
  for (const s of SCRIPTS.slice(0, 3)) time(GATE_SH, ['-lc', s], { env: dfa.te.env, cwd: wsDfa }), time(GATE_SH, ['-lc', s], { env: wsw.te.env, cwd: wsWsw });
  out.per_call_danger_full_access = await perCall('danger-full-access', dfa, wsDfa);
  out.per_call_workspace_write = await perCall('workspace-write', wsw, wsWsw);
  out.mcp_danger_full_access = await mcp('danger-full-access', dfa, wsDfa);
  out.mcp_workspace_write = await mcp('workspace-write', wsw, wsWsw);
  out.cold_start = await coldStart();
  out.daemon_memory = await memory(dfa, wsDfa);
  out.load_average = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
} finally {
  await dfa.stop();
  await wsw.stop();
  dfa.te.cleanup();
  wsw.te.cleanup();
}
console.log(JSON.stringify(out));
