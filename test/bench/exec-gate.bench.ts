/**
 * Exec-gate overhead (real daemon, real gate-sh, real bash):
 *  - per exec: 1,000 `/bin/true` execs from one bash, each timed with $EPOCHREALTIME, with the gate (a
 *    script run by gate-sh: every exec asks the daemon) and without (the same script under plain bash),
 *    in interleaved rounds so that a change in the machine's load hits both alike; target: p50 overhead
 *    <= 1 ms per exec;
 *  - the same with the runtime folder (where every request binds its reply socket) on tmpfs, as
 *    systemd's /run/user/<uid> is, when /dev/shm is tmpfs: on a disk filesystem creating and deleting
 *    that socket file is the largest part of the caller's kernel time;
 *  - an escalated run (explicit allow rule -> the daemon spawns it with the caller's descriptors) against
 *    the same program run directly, 200 times each.
 * Prints one JSON object on its last line.
 */
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escFixture, gateSh, run, execGateOptions } from '../exec-gate/helpers.js';
import { warmedUp } from '../daemon/helpers.js';
import { execTimes, runBench } from './helpers.js';
import { type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

/** A steady daemon (warmedUp): its idle-time warm-up neither counted as the exec gate's CPU nor competing. */
async function warmed(rig: DaemonProc): Promise<DaemonProc> {
  await warmedUp(rig.paths);
  return rig;
}

// outside world-writable folders even in a CI clone under /tmp: else every escalation is a denied prompt
const ESC = escFixture();
const RULES = ['prefix_rule(pattern=["bash"], decision="allow")', `prefix_rule(pattern=["${ESC}"], decision="allow")`];
const ROUNDS = 5;
const PER_ROUND = 200;
const TMPFS_MAGIC = 0x01021994;

function timingScript(cmd: string, n: number): string {
  // `times`: the CPU the loop's children used (user, system), less sensitive to a busy machine than wall time
  // every iteration must succeed: a denial is fast and would pass for a cheap exec
  return `for i in $(seq ${n}); do s=$EPOCHREALTIME; ${cmd} || { echo "iteration $i failed: $?" >&2; exit 1; }; e=$EPOCHREALTIME; echo "$s $e"; done; times\n`;
}

/** Children's CPU seconds from bash's `times` (its last line: "XmY.YYYs XmY.YYYs"). */
function childCpu(out: string): number {
  const m = out.trim().split('\n').pop()!.match(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/);
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : NaN;
}

/** A process's CPU seconds (utime + stime) from /proc. */
function procCpu(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}


const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const r3 = (x: number) => Math.round(x * 1000) / 1000;

interface PerExec {
  gated: number[];
  plain: number[];
  /** children's CPU seconds, summed over the rounds */
  gatedCpu: number;
  plainCpu: number;
  daemonCpu: number;
}

/** ROUNDS x (PER_ROUND gated execs, then PER_ROUND plain ones). */
async function perExec(rig: DaemonProc): Promise<PerExec> {
  writeFileSync(join(rig.ws, 'true.sh'), timingScript('/bin/true', PER_ROUND));
  const daemonPid = Number(readFileSync(rig.paths.pidFile, 'utf8'));
  const m: PerExec = { gated: [], plain: [], gatedCpu: 0, plainCpu: 0, daemonCpu: 0 };
  for (let i = 0; i < ROUNDS; i++) {
    const d0 = procCpu(daemonPid);
    const g = await gateSh(rig, 'bash ./true.sh');
    m.daemonCpu += procCpu(daemonPid) - d0;
    const p = await run('/bin/bash', ['./true.sh'], { env: rig.env, cwd: rig.ws });
    for (const [n, r] of Object.entries({ g, p })) if (r.code !== 0) throw new Error(`${n} failed (${r.code}): ${r.stderr.slice(0, 500)}`);
    m.gated.push(...execTimes(g.stdout));
    m.plain.push(...execTimes(p.stdout));
    m.gatedCpu += childCpu(g.stdout);
    m.plainCpu += childCpu(p.stdout);
  }
  m.gated.sort((a, b) => a - b);
  m.plain.sort((a, b) => a - b);
  return m;
}

async function main(): Promise<Record<string, unknown>> {
  const rig = await warmed(await startDaemon(execGateOptions({ rules: RULES })));
  let figures: Record<string, unknown>;
  try {
    const m = await perExec(rig);
    writeFileSync(join(rig.ws, 'esc.sh'), timingScript(`${ESC} exit 0`, 200));
    const escG = await gateSh(rig, 'bash ./esc.sh');
    const escP = await run('/bin/bash', ['./esc.sh'], { env: rig.env, cwd: rig.ws });
    for (const [n, r] of Object.entries({ escG, escP })) if (r.code !== 0) throw new Error(`${n} failed (${r.code}): ${r.stderr.slice(0, 500)}`);
    const eg = execTimes(escG.stdout);
    const ep = execTimes(escP.stdout);
    const n = m.gated.length;
    figures = {
      execs: n,
      exec_p50_ms_gated: r3(pct(m.gated, 50)),
      exec_p50_ms_plain: r3(pct(m.plain, 50)),
      exec_overhead_p50_ms: r3(pct(m.gated, 50) - pct(m.plain, 50)),
      exec_overhead_p99_ms: r3(pct(m.gated, 99) - pct(m.plain, 99)),
      // CPU per exec: the exec'ing side (library, constructor, request) and the daemon (decision, reply)
      exec_cpu_overhead_ms_caller: r3(((m.gatedCpu - m.plainCpu) * 1000) / n),
      exec_cpu_ms_daemon: r3((m.daemonCpu * 1000) / n),
      runtime_fs: statfsSync(rig.paths.clientDir).type === TMPFS_MAGIC ? 'tmpfs' : 'disk',
      loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
      target_exec_overhead_p50_ms: 1,
      escalated_runs: eg.length,
      escalated_p50_ms: r3(pct(eg, 50)),
      direct_p50_ms: r3(pct(ep, 50)),
      escalation_overhead_p50_ms: r3(pct(eg, 50) - pct(ep, 50)),
    };
  } finally {
    killAll();
    await rig.close();
  }
  if (statfsSync('/dev/shm').type === TMPFS_MAGIC && figures.runtime_fs !== 'tmpfs') {
    const shm = mkdtempSync('/dev/shm/gate-bench-');
    const rig2 = await warmed(await startDaemon(execGateOptions({ rules: RULES, env: { XDG_RUNTIME_DIR: join(shm, 'r') } })));
    try {
      const m = await perExec(rig2);
      figures.exec_overhead_p50_ms_runtime_tmpfs = r3(pct(m.gated, 50) - pct(m.plain, 50));
      figures.exec_cpu_overhead_ms_caller_runtime_tmpfs = r3(((m.gatedCpu - m.plainCpu) * 1000) / m.gated.length);
    } finally {
      killAll();
      await rig2.close();
      rmSync(shm, { recursive: true, force: true });
    }
  }
  return figures;
}

runBench(main);
