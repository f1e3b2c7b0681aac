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
