/**
 * Exec-gate overhead (real daemon, real gate-sh, real bash):
 *  - per exec: 1,000 `/bin/true` execs from one bash, each timed with $EPOCHREALTIME, with the gate (a
 *    script run by gate-sh: every exec asks the daemon) and without (the same script under plain bash);
 *    target: p50 overhead ≤ 1 ms per exec;
 *  - an escalated run (explicit allow rule → the daemon spawns it with the caller's descriptors) against
 *    the same program run directly, 200 times each.
 * Prints one JSON object on its last line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { gateSh, run, startRig, killAll } from '../exec-gate/helpers.js';

const ESC = join(ROOT, 'test', 'exec-gate', 'esc.sh');

function timingScript(cmd: string, n: number): string {
  // `times`: the CPU the loop's children used (user, system), less sensitive to a busy machine than wall time
  return `for i in $(seq ${n}); do s=$EPOCHREALTIME; ${cmd}; e=$EPOCHREALTIME; echo "$s $e"; done; times\n`;
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

function durations(out: string): number[] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number))
    .filter((p) => p.length === 2 && p.every(Number.isFinite))
    .map(([s, e]) => (e - s) * 1000)
    .sort((a, b) => a - b);
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const rig = await startRig({ rules: ['prefix_rule(pattern=["bash"], decision="allow")', `prefix_rule(pattern=["${ESC}"], decision="allow")`] });
  try {
    writeFileSync(join(rig.work, 'true.sh'), timingScript('/bin/true', 1000));
    writeFileSync(join(rig.work, 'esc.sh'), timingScript(`${ESC} exit 0`, 200));
    const daemonPid = Number(readFileSync(rig.paths.pidFile, 'utf8'));
    const d0 = procCpu(daemonPid);
    const gated = await gateSh(rig, 'bash ./true.sh');
    const daemonCpu = procCpu(daemonPid) - d0;
    const plain = await run('/bin/bash', ['./true.sh'], { env: rig.env, cwd: rig.work });
    const escG = await gateSh(rig, 'bash ./esc.sh');
    const escP = await run('/bin/bash', ['./esc.sh'], { env: rig.env, cwd: rig.work });
    for (const [n, r] of Object.entries({ gated, plain, escG, escP })) if (r.code !== 0) throw new Error(`${n} failed (${r.code}): ${r.stderr.slice(0, 500)}`);
    const g = durations(gated.stdout);
    const p = durations(plain.stdout);
    const eg = durations(escG.stdout);
    const ep = durations(escP.stdout);
    console.log(
      JSON.stringify({
        execs: g.length,
        exec_p50_ms_gated: r3(pct(g, 50)),
        exec_p50_ms_plain: r3(pct(p, 50)),
        exec_overhead_p50_ms: r3(pct(g, 50) - pct(p, 50)),
        exec_overhead_p99_ms: r3(pct(g, 99) - pct(p, 99)),
        // CPU per exec: the exec'ing side (library, constructor, request) and the daemon (decision, reply)
        exec_cpu_overhead_ms_caller: r3(((childCpu(gated.stdout) - childCpu(plain.stdout)) * 1000) / g.length),
        exec_cpu_ms_daemon: r3((daemonCpu * 1000) / g.length),
        loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        target_exec_overhead_p50_ms: 1,
        escalated_runs: eg.length,
        escalated_p50_ms: r3(pct(eg, 50)),
        direct_p50_ms: r3(pct(ep, 50)),
        escalation_overhead_p50_ms: r3(pct(eg, 50) - pct(ep, 50)),
      }),
    );
  } finally {
    killAll();
    await rig.stop();
  }
}

main().catch((e) => {
  console.error(e);
  console.log(JSON.stringify({ error: String(e) }));
  process.exit(1);
});
