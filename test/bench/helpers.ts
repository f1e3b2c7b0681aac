// Shared by the benchmarks (test only, not pure: prints and exits). test/bench/run.mjs reads the last
// stdout line of each benchmark as its JSON figures; no trust boundary here.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

/** Runs a benchmark's main and prints its figures as one JSON line; on a failure the error goes to
 * stderr, `{ "error": ... }` to stdout, and the process exits 1. */
export function runBench(main: () => Promise<Record<string, unknown>>): void {
  main()
    .then((figures) => console.log(JSON.stringify(figures)))
    .catch((e) => {
      console.error(e);
      console.log(JSON.stringify({ error: String(e) }));
      process.exit(1);
    });
}

/** programs/notif-floor.c, built here, and (with `respond`) its responder on sock: what a gated call
 * cannot do without, with none of gate-sh's work. `stop()` ends the responder and removes the folder. */
export interface Floor {
  program: string;
  sock: string;
  stop(): void;
}

export async function startFloor(respond = true): Promise<Floor> {
  const dir = mkdtempSync(join(tmpdir(), 'g-floor-'));
  const program = join(dir, 'notif-floor');
  const sock = join(dir, 'r.sock');
  execFileSync('gcc', ['-static', '-O2', '-o', program, join(ROOT, 'test', 'bench', 'programs', 'notif-floor.c')]);
  const responder = respond ? spawn(program, ['--respond', sock], { stdio: 'ignore' }) : null;
  for (let i = 0; responder && i < 500 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 10));
  if (responder && !existsSync(sock)) throw new Error(`notif-floor --respond ${sock} did not start`);
  return {
    program,
    sock,
    stop: () => {
      responder?.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The per-exec times (ms) a timing loop printed: one "<start> <end>" line (seconds) per exec. */
export function execTimes(out: string): number[] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number))
    .filter((p) => p.length === 2 && p.every(Number.isFinite))
    .map(([s, e]) => (e - s) * 1000);
}

/** One native gate-sh call as the daemon sees it: the plan pre-flight of `script` in `cwd`, then its
 * run-finished (what the native gate-sh sends, without running anything). */
export async function planCall(
  c: { request(m: Record<string, unknown>): Promise<unknown>; notify(m: Record<string, unknown>): void },
  o: { script: string; cwd: string; planEnv: string[]; gateSh: string },
): Promise<void> {
  const reply = (await c.request({
    type: 'preflight',
    shell: 'bash',
    flag: '-lc',
    script: o.script,
    cwd: o.cwd,
    pid: process.pid,
    sandbox_permissions: 'use_default',
    plan: { argv: ['-lc', o.script], argv0: o.gateSh, env: o.planEnv, fds: [], shims: join(ROOT, 'shims') },
  })) as { run_id: string };
  c.notify({ type: 'run-finished', run_id: reply.run_id, exit_status: 0, duration_ms: 1 });
}
