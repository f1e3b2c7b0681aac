/**
 * Sandbox start-up overhead per subcommand: `true` under bubblewrap (the turn sandbox as gate-sh builds
 * it) against `true` alone, both spawned the same way. Target: overhead ≤ 15 ms (p50). Also the time to
 * build the argv (pure, with the real filesystem view). Prints one JSON object on its last line.
 */
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { turnSandboxArgv, permissionProfileArgv } from '../../src/sandbox/bwrap-argv.js';
import { gateSandboxContext } from '../../src/sandbox/gate-context.js';
import { workspaceWrite } from '../../src/sandbox/policy.js';
import { findBwrap, prepareGateDirs } from '../../src/exec/sandbox-run.js';

const RUNS = 150;
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)];
const round = (x: number) => Math.round(x * 100) / 100;

function timeSpawn(argv: string[], cwd: string): number[] {
  for (let i = 0; i < 10; i++) spawnSync(argv[0], argv.slice(1), { cwd, stdio: 'ignore' });
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: 'ignore' });
    out.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'gb-'));
try {
  const ws = join(dir, 'ws');
  mkdirSync(join(ws, '.git'), { recursive: true });
  const env = { ...process.env, HOME: dir, GATE_HOME: join(dir, 'gh'), CODEX_HOME: join(dir, 'ch'), XDG_RUNTIME_DIR: join(dir, 'r') };
  mkdirSync(join(env.XDG_RUNTIME_DIR, 'gate-sh', 'default', 'req'), { recursive: true });
  prepareGateDirs(env);
  const bwrap = findBwrap(env);
  const ctx = gateSandboxContext({ cwd: ws, env });
  const truePath = '/bin/true';

  const plain = timeSpawn([truePath], ws);
  const variants: Record<string, string[]> = {
    'read-only': turnSandboxArgv({ type: 'read-only' }, ctx)!,
    'workspace-write': turnSandboxArgv(workspaceWrite(), ctx)!,
    'workspace-write+network': turnSandboxArgv(workspaceWrite({ network_access: true }), ctx)!,
    'permissions(write ws, read restricted)': permissionProfileArgv({ file_system: { write: [ws], read: [ws] } }, ctx),
  };
  const figures: Record<string, unknown> = { runs: RUNS, true_p50_ms: round(pct(plain, 0.5)) };
  for (const [name, args] of Object.entries(variants)) {
    const t = timeSpawn([bwrap, ...args, truePath], ws);
    figures[name] = { p50_ms: round(pct(t, 0.5)), p90_ms: round(pct(t, 0.9)), overhead_p50_ms: round(pct(t, 0.5) - pct(plain, 0.5)) };
  }
  const build: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    turnSandboxArgv(workspaceWrite(), gateSandboxContext({ cwd: ws, env }));
    build.push(performance.now() - t0);
  }
  figures.argv_build_p50_ms = round(pct(build, 0.5) * 1000) / 1000;
  const overhead = (figures['workspace-write'] as { overhead_p50_ms: number }).overhead_p50_ms;
  figures.target = { overhead_p50_ms: 15, met: overhead <= 15 };
  console.log(JSON.stringify(figures));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
