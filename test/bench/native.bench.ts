/**
 * Issue 19's figures, side by side in one run, alternating (the machine is shared: each ratio's inputs
 * are taken in turn, per script). Prints one JSON object on its last line.
 * - per call: `gate-sh -lc S` (the native entry point) over 10 typical agent scripts next to `bash -lc S`
 *   (danger-full-access) and `bwrap <the plan's own mounts> bash -lc S` (workspace-write), with the Node
 *   gate-sh (GATE_SH_NODE=1) for reference; ratio of medians per script, and the median of those ratios;
 *   in danger-full-access also the floor (programs/notif-floor.c --call): a client's one round trip to a
 *   responder that does no work, then `bash -lc S` under a seccomp filter whose every exec a supervisor
 *   answers at once and follows — what any gate with a pre-flight and a kernel layer pays, none of gate-sh's
 *   own work
 * - cold start: the first `gate-sh -c true` with no daemon (autostart), next to `gate daemon start` alone
 * - the daemon's resident memory before and after 10,000 plan pre-flights (plus run-finished each)
 * The MCP comparison with OpenAI's codex-shell-tool-mcp is mcp-peer.bench.ts. Timings are medians in ms;
 * the load average is printed with them. Nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE, GATE_SH, ROOT, tempEnv } from '../helpers/env.js';
import { warmedUp } from '../daemon/helpers.js';
import { RequestClient } from '../../src/transport/client.js';
import { loadAverage, SCRIPTS, workspace } from './agent-scripts.js';
import { type Floor, planCall, startFloor } from './helpers.js';
import { gatePaths } from '../../src/paths/paths.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number): number => Math.round(x * 10) / 10;
const r2 = (x: number): number => Math.round(x * 100) / 100;

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
    const reply = (await c.request({
      type: 'preflight',
      shell: 'bash',
      flag: '-lc',
      script,
      cwd: ws,
      pid: process.pid,
      sandbox_permissions: 'use_default',
      plan,
    })) as { plan?: { program?: string; args?: string[] } };
    const p = reply.plan;
    if (!p?.program || !p.args) throw new Error(`no plan for ${script}: ${JSON.stringify(reply)}`);
    // the plan starts bwrap under the kernel layer's launcher (gate-launch [--session-ns ...] BWRAP ARGS):
    // the base is bwrap alone, with the plan's own mounts
    const full = [p.program, ...p.args];
    const at = full.findIndex((a) => a.endsWith('/bwrap'));
    if (at < 0) throw new Error(`no bwrap in the plan for ${script}: ${full.join(' ')}`);
    const sep = full.indexOf('--', at);
    const mounts = full.slice(at + 1, sep);
    const shims = mounts.findIndex((a, i) => a === '--ro-bind' && mounts[i + 1] === join(ROOT, 'shims'));
    if (shims >= 0) mounts.splice(shims, 3);
    return { program: full[at], args: [...mounts, '--', '/bin/bash', '-lc', script] };
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
  /** danger-full-access: the floor (see the header) and floor / base */
  floor_ms?: number;
  floor_ratio?: number;
}

async function perCall(
  mode: 'danger-full-access' | 'workspace-write',
  d: DaemonProc,
  ws: string,
  floor: Floor | null,
): Promise<{ rows: Row[]; median_ratio: number; max_ratio: number; median_floor_ratio?: number }> {
  const env = { ...d.te.env, GATE_NO_AUTOSTART: '1' };
  const rows: Row[] = [];
  const sides = floor ? 4 : 3;
  for (const s of SCRIPTS) {
    const base = mode === 'workspace-write' ? await sandboxArgv(env, ws, s) : { program: '/bin/bash', args: ['-lc', s] };
    const t: number[][] = [[], [], [], []];
    for (let i = 0; i < ROUNDS + 1; i++) {
      // the order rotates, so no side always runs right after another
      const order = Array.from({ length: sides }, (_, k) => (k + i) % sides);
      for (const k of order) {
        const ms =
          k === 0
            ? time(base.program, base.args, { env: d.te.env, cwd: ws })
            : k === 1
              ? time(GATE_SH, ['-lc', s], { env, cwd: ws })
              : k === 2
                ? time(GATE_SH, ['-lc', s], { env: { ...env, GATE_SH_NODE: '1' }, cwd: ws })
                : time(floor!.program, ['--call', floor!.sock, '/bin/bash', '-lc', s], { env: d.te.env, cwd: ws });
        if (i > 0) t[k].push(ms);
      }
    }
    const [b, n, j, f] = t.map((xs) => (xs.length ? median(xs) : 0));
    rows.push({
      script: s,
      base_ms: r1(b),
      native_ms: r1(n),
      node_ms: r1(j),
      ratio: r2(n / b),
      ...(floor ? { floor_ms: r1(f), floor_ratio: r2(f / b) } : {}),
    });
  }
  const floorRatio = floor ? { median_floor_ratio: median(rows.map((r) => r.floor_ratio!)) } : {};
  return { rows, median_ratio: median(rows.map((r) => r.ratio)), max_ratio: Math.max(...rows.map((r) => r.ratio)), ...floorRatio };
}

/**
 * First call with no daemon (autostart), alternating in each round: the native gate-sh starting the daemon
 * itself; the same handed over to the Node gate-sh (GATE_AUTOSTART=true: what names autostart goes to
 * Node); the daemon from its module graph instead of its bundle (GATE_NO_BUNDLE=1); next to `gate daemon
 * start` alone and `node -e 0`. Danger-full-access (no bwrap), `gate-sh -c true`.
 */
async function coldStart(): Promise<Record<string, unknown>> {
  const kinds = ['native', 'node_client', 'daemon_module_graph', 'daemon_start_alone', 'node_e0'] as const;
  const t: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let i = 0; i < 5; i++) {
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(i + j) % kinds.length];
      const te = tempEnv({
        GATE_SANDBOX_MODE: 'danger-full-access',
        ...(k === 'node_client' ? { GATE_AUTOSTART: 'true' } : k === 'daemon_module_graph' ? { GATE_NO_BUNDLE: '1' } : {}),
      });
      try {
        const t0 = performance.now();
        const r =
          k === 'daemon_start_alone'
            ? spawnSync(process.execPath, [GATE, 'daemon', 'start'], { env: te.env, stdio: 'ignore' })
            : k === 'node_e0'
              ? spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' })
              : spawnSync(GATE_SH, ['-c', 'true'], { env: te.env, cwd: te.dir, stdio: 'ignore' });
        const ms = performance.now() - t0;
        if (r.status !== 0) throw new Error(`cold start ${k} exited ${r.status}`);
        t[k].push(ms);
      } finally {
        if (k !== 'node_e0') spawnSync(process.execPath, [GATE, 'daemon', 'stop'], { env: te.env, stdio: 'ignore' });
        te.cleanup();
      }
    }
  }
  return { ...Object.fromEntries(kinds.map((k) => [`${k}_ms`, r1(median(t[k]))])), runs: 5, load_average: loadAverage() };
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
    for (let i = 0; i < CALLS; i++) await planCall(c, { script: SCRIPTS[i % SCRIPTS.length], cwd: ws, planEnv, gateSh: GATE_SH });
  } finally {
    c.close();
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  return { calls: CALLS, rss_before_mib: r1(before / 1024), rss_after_mib: r1(rssKiB(pid) / 1024), per_call_ms: r2(ms / CALLS) };
}

const out: Record<string, unknown> = { rounds: ROUNDS, load_average_before: loadAverage() };
const dfa = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'on-request' } });
const wsw = await startDaemon({ env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request' } });
try {
  await Promise.all([warmedUp(dfa.paths), warmedUp(wsw.paths)]);
  const wsDfa = workspace(dfa.te.dir, dfa.te.env);
  const wsWsw = workspace(wsw.te.dir, wsw.te.env);
  for (const s of SCRIPTS.slice(0, 3)) time(GATE_SH, ['-lc', s], { env: dfa.te.env, cwd: wsDfa }), time(GATE_SH, ['-lc', s], { env: wsw.te.env, cwd: wsWsw });
  const floor = await startFloor();
  try {
    out.per_call_danger_full_access = await perCall('danger-full-access', dfa, wsDfa, floor);
  } finally {
    floor.stop();
  }
  out.per_call_workspace_write = await perCall('workspace-write', wsw, wsWsw, null);
  out.cold_start = await coldStart();
  out.daemon_memory = await memory(dfa, wsDfa);
  out.load_average_after = loadAverage();
} finally {
  await dfa.stop();
  await wsw.stop();
  dfa.te.cleanup();
  wsw.te.cleanup();
}
console.log(JSON.stringify(out));
