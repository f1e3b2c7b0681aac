/**
 * gate-sh's own costs, against a warm daemon (real sockets, real bash). Prints one JSON object last.
 * - startup: `gate-sh -c true` next to `node -e 0`, interleaved in the same run (target ratio ≤ 1.3), with a
 *   danger-full-access daemon (no sandbox) and with a workspace-write one (the default: bubblewrap)
 * - throughput: `cat` of 1 GiB through gate-sh vs bash, stdout read by this process, first byte to last
 *   (target ≥ 0.95), 8 runs each, alternating which goes first (the figure swung ±40% between runs of 3); start-up is the figure above
 * - concurrency: 50 client processes × 100 preflights each, no lost or crossed replies
 * Timings are medians; the machine may be shared, so the inputs of each ratio are interleaved.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, ftruncateSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE_SH } from '../helpers/env.js';
import { warmedUp } from '../daemon/helpers.js';
import { bursts } from '../shell/bursts.js';
import { startDaemon } from '../helpers/daemon.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function timeRun(cmd: string, args: string[], env: Record<string, string>): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return performance.now() - t0;
}

/** ms from the first byte of stdout to the last (start-up excluded: that is the startup figure), bytes checked. */
function readAll(cmd: string, args: string[], env: Record<string, string>, expect: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let t0 = 0;
    const c = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let n = 0;
    c.stdout.on('data', (b: Buffer) => {
      if (n === 0) t0 = performance.now();
      n += b.length;
    });
    c.on('close', (code) => (code === 0 && n === expect ? resolve(performance.now() - t0) : reject(new Error(`${cmd}: exit ${code}, ${n} bytes`))));
  });
}

const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'on-request' } });
const env = { ...d.te.env, GATE_NO_AUTOSTART: '1' };
const dws = await startDaemon({ env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request' } });
const envWs = { ...dws.te.env, GATE_NO_AUTOSTART: '1' };
try {
  // steady daemons: their idle-time warm-up (a second or two of CPU from 10 s after start) would otherwise
  // land in whichever figure is being taken then
  await Promise.all([warmedUp(d.paths), warmedUp(dws.paths)]);
  // startup
  for (let i = 0; i < 3; i++) timeRun(GATE_SH, ['-c', 'true'], env), timeRun(GATE_SH, ['-c', 'true'], envWs); // warm the page cache and the daemons
  const node: number[] = [];
  const gate: number[] = [];
  const gateWs: number[] = [];
  const gateVersion: number[] = [];
  for (let i = 0; i < 30; i++) {
    node.push(timeRun(process.execPath, ['-e', '0'], env));
    gate.push(timeRun(GATE_SH, ['-c', 'true'], env));
    gateWs.push(timeRun(GATE_SH, ['-c', 'true'], envWs));
    gateVersion.push(timeRun(GATE_SH, ['--version'], env));
  }
  // throughput: a sparse 1 GiB file, so the disk is not what is measured
  const big = join(d.te.dir, 'gib');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 1 << 30);
  closeSync(fd);
  const viaBash: number[] = [];
  const viaGate: number[] = [];
  await readAll('/bin/bash', ['-c', `cat ${big}`], env, 1 << 30); // the file's pages in the page cache
  for (let i = 0; i < 8; i++) {
    // alternating which goes first, so a drift in the machine's load hits both alike
    const pair = [() => readAll('/bin/bash', ['-c', `cat ${big}`], env, 1 << 30), () => readAll(GATE_SH, ['-c', `cat ${big}`], env, 1 << 30)];
    if (i % 2) pair.reverse();
    const a = await pair[0]();
    const b = await pair[1]();
    viaBash.push(i % 2 ? b : a);
    viaGate.push(i % 2 ? a : b);
  }
  rmSync(big);
  // concurrency
  const t0 = performance.now();
  const res = await bursts(d.te.env, 50, 100, 4);
  const burstMs = performance.now() - t0;
  const lat = res.flatMap((r) => [r.p50 ?? NaN]);
  const mib = (ms: number): number => Math.round((1024 / ms) * 1000);
  console.log(
    JSON.stringify({
      startup_node_e0_ms: +median(node).toFixed(1),
      startup_gate_sh_c_true_ms: +median(gate).toFixed(1),
      startup_gate_sh_version_ms: +median(gateVersion).toFixed(1),
      startup_ratio: +(median(gate) / median(node)).toFixed(2),
      startup_ratio_target: 1.3,
      startup_gate_sh_c_true_workspace_write_ms: +median(gateWs).toFixed(1),
      startup_ratio_workspace_write: +(median(gateWs) / median(node)).toFixed(2),
      startup_ratio_workspace_write_target: 1.3,
      cat_1gib_bash_mib_s: mib(median(viaBash)),
      cat_1gib_gate_sh_mib_s: mib(median(viaGate)),
      throughput_ratio: +(median(viaBash) / median(viaGate)).toFixed(3),
      throughput_ratio_target: 0.95,
      clients_50x100_ok: res.reduce((a, r) => a + r.ok, 0),
      clients_50x100_lost: res.reduce((a, r) => a + r.lost, 0),
      clients_50x100_crossed: res.reduce((a, r) => a + r.crossed, 0),
      clients_50x100_wall_ms: Math.round(burstMs),
      clients_50x100_errors: [...new Set(res.flatMap((r) => r.errors))].slice(0, 3),
      clients_50x100_client_p50_ms_median: +median(lat).toFixed(1),
      load_average: (await import('node:os')).loadavg().map((x) => +x.toFixed(1)),
    }),
  );
} finally {
  await d.stop();
  await dws.stop();
  d.te.cleanup();
  dws.te.cleanup();
}
