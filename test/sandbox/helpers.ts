// Shared set-up for the real-bubblewrap tests: a temp environment with a workspace and gate-sh's folders, and
// the daemon with a console those tests share (a preset of test/helpers/daemon.ts's rig). Test-only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { tempEnv, type TempEnv } from '../helpers/env.js';
import { tmpdir } from 'node:os';
import { gatePaths, runClientDir, type GatePaths } from '../../src/paths/paths.js';
import { gateSandboxContext, hostSockets } from '../../src/sandbox/gate-context.js';
import type { SandboxContext } from '../../src/sandbox/bwrap-argv.js';
import { findBwrap, prepareGateDirs } from '../../src/exec/sandbox-run.js';
import type { TestContext } from 'node:test';
import { approveConsole, type Console } from '../daemon/helpers.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

export interface Box extends TempEnv {
  ws: string;
  paths: GatePaths;
  /** a run's own client folder (as the daemon makes one per run): the sandbox's only writable one */
  runDir: string;
  ctx(over?: Partial<SandboxContext>): SandboxContext;
  /** run bash -c script under these bwrap args; stdout, stderr, status */
  run(args: string[] | null, script: string): { out: string; err: string; status: number };
  /** the same without blocking the event loop (servers in this process must answer) */
  runAsync(args: string[] | null, script: string): Promise<{ out: string; err: string; status: number }>;
}

export const BWRAP = findBwrap(process.env);

const OTHER_TESTS = new RegExp(`^${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/g-[^/]+/`);

/** The host's path sockets now, without other tests' (their temp folders), but with those under `own`. */
function ownSockets(own: string): string[] {
  return hostSockets().filter((p) => !OTHER_TESTS.test(p) || p.startsWith(`${own}/`));
}

export function box(extraEnv: Record<string, string> = {}): Box {
  const t = tempEnv(extraEnv);
  const ws = join(t.dir, 'ws');
  mkdirSync(join(ws, '.git'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[core]\n');
  const paths = gatePaths(t.env);
  mkdirSync(paths.rulesDir, { recursive: true });
  writeFileSync(join(paths.rulesDir, 'default.rules'), '');
  const runDir = runClientDir(paths, 'r-test');
  mkdirSync(runDir, { recursive: true });
  mkdirSync(paths.approvalDir, { recursive: true });
  prepareGateDirs(t.env);
  return {
    ...t,
    ws,
    paths,
    runDir,
    // the host's sockets to mask, but those of other tests' temp folders (g-*): they come and go while this
    // test runs bubblewrap with the argv alone, which fails on a socket gone meanwhile ("Can't create file at
    // .../srv.sock"; gate-sh's launcher skips one: src/sandbox/sockets.ts); this test's own stay
    ctx: (over = {}) => ({ ...gateSandboxContext({ cwd: ws, env: t.env, clientDir: runDir, hostSockets: ownSockets(t.dir) }), ...over }),
    run(args, script) {
      const argv = args === null ? ['bash', '-c', script] : [BWRAP, ...args, 'bash', '-c', script];
      const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, env: t.env, encoding: 'utf8', timeout: 20_000 });
      return { out: r.stdout, err: r.stderr, status: r.status ?? 128 };
    },
    runAsync(args, script) {
      const argv = args === null ? ['bash', '-c', script] : [BWRAP, ...args, 'bash', '-c', script];
      const p = spawn(argv[0], argv.slice(1), { cwd: ws, env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (err += d));
      return new Promise((res) => p.on('close', (code) => res({ out, err, status: code ?? 128 })));
    },
  };
}

export interface ConsoleRig {
  te: TempEnv;
  d: DaemonProc;
  /** a `gate approve --json` console named "human" */
  c: Console;
  ws: string;
  /** a folder outside the workspace (and outside the sandbox's writable roots) */
  outside: string;
}

/**
 * A real daemon with a workspace-write turn sandbox that leaves /tmp and $TMPDIR out (the temp folders
 * live under /tmp: so `outside` really is outside), a console to answer prompts, a workspace and a folder
 * outside it. `config`: more top-level config.toml lines. Stopped and removed after the test.
 */
export async function consoleRig(t: TestContext, config = ''): Promise<ConsoleRig> {
  const d = await startDaemon({
    env: { GATE_NO_AUTOSTART: '1' },
    config: `sandbox_mode = "workspace-write"\n${config}[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n`,
    workspace: 'ws',
  });
  const c = await approveConsole(d.env, 'human');
  t.after(async () => (await c.close(), await d.close()));
  const outside = join(d.te.dir, 'outside');
  mkdirSync(outside);
  return { te: d.te, d, c, ws: d.ws, outside };
}
