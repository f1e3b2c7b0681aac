/**
 * How long gate-sh takes to say it cannot reach its daemon from inside another sandbox (issue 14: within
 * 2 s, not the 30 s autostart wait), next to the same `gate-sh -c true` where the daemon is reachable, same
 * daemon, interleaved. Sandboxes: bwrap with a seccomp filter denying connect/bind/send (as Codex's),
 * Landlock with writes only in a workspace, bwrap hiding the runtime folder. Wall time of the whole process
 * (bwrap/python start-up included; landlock_fixture_alone is the python fixture's own share). Prints one
 * JSON object on its last line.
 */
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { denySocketsFilter, LANDLOCK } from '../daemon/helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

const RUNS = 10;
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const round = (x: number) => Math.round(x);

const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
try {
  const work = join(d.te.dir, 'w');
  mkdirSync(work);
  const filter = join(d.te.dir, 'deny.bpf');
  writeFileSync(filter, denySocketsFilter());
  const BWRAP = ['bwrap', '--bind', '/', '/', '--dev-bind', '/dev', '/dev'];
  const cases: Record<string, { argv: string[]; seccomp?: boolean; want: number }> = {
    reachable_bwrap: { argv: [...BWRAP, GATE_SH, '-c', 'true'], want: 0 },
    seccomp_bwrap: { argv: [...BWRAP, '--seccomp', '3', GATE_SH, '-c', 'true'], seccomp: true, want: 126 },
    landlock: { argv: [...LANDLOCK, `${work}:/dev`, GATE_SH, '-c', 'true'], want: 126 },
    landlock_fixture_alone: { argv: [...LANDLOCK, `${work}:/dev`, 'true'], want: 0 },
    runtime_hidden_bwrap: { argv: [...BWRAP, '--tmpfs', d.te.dir, GATE_SH, '-c', 'true'], want: 126 },
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < RUNS + 1; i++) {
    for (const [name, c] of Object.entries(cases)) {
      const fd = c.seccomp ? openSync(filter, 'r') : undefined;
      const t0 = performance.now();
      const r = spawnSync(c.argv[0], c.argv.slice(1), {
        cwd: work,
        env: d.te.env,
        stdio: ['ignore', 'ignore', 'pipe', ...(fd === undefined ? [] : [fd])],
        encoding: 'utf8',
      });
      const ms = performance.now() - t0;
      if (fd !== undefined) closeSync(fd);
      if (r.status !== c.want) throw new Error(`${name}: exit ${r.status}, wanted ${c.want}: ${r.stderr}`);
      if (i > 0) times[name].push(ms); // the first round warms the page cache
    }
  }
  const out: Record<string, unknown> = { runs: RUNS, target_ms: 2000 };
  for (const [name, xs] of Object.entries(times)) out[name] = { p50_ms: round(pct(xs, 0.5)), max_ms: round(Math.max(...xs)) };
  console.log(JSON.stringify(out));
} finally {
  await d.stop();
  await killAll();
  d.te.cleanup();
}
