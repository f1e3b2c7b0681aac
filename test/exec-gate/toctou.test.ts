/**
 * The kernel layer's argv TOCTOU (docs/exec-gate.md, "argv rewritten between check and exec"): the kernel
 * copies an exec's path and argv from the process's memory after the supervisor has read them and answered,
 * so another thread sharing that memory can rewrite them in between. A static program (no LD_PRELOAD layer)
 * whose thread flips the exec'd path between /bin/ls and /bin/rm, or argv[1] between an allowed and a
 * forbidden file name, 200 times each: with the rewritten exec forbidden, rm and the forbidden touch must
 * never run; with them allowed, every attempt runs one of the two. Real daemon, real gate-sh, the program
 * built here with gcc -static -pthread.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { execGateOptions, gateSh } from './helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

let bin = '';

before(() => {
  bin = mkdtempSync(join(tmpdir(), 'gate-toctou-bin-'));
  execFileSync('gcc', ['-static', '-pthread', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, 'race'), join(ROOT, 'test', 'exec-gate', 'programs', 'race.c')]);
  process.on('exit', () => rmSync(bin, { recursive: true, force: true }));
});

/** exit status → count, from the race program's last line */
function statuses(stdout: string): Record<number, number> {
  const out: Record<number, number> = {};
  for (const m of stdout.matchAll(/exit=(\d+):(\d+)/g)) out[Number(m[1])] = Number(m[2]);
  return out;
}

const N = 200;
// ls -d / exits 0; rm -d / exits 1 (it never removes the root); a refused exec exits 126, a killed one 137
const RACE = (b: string) => `"${b}/race" ${N} path /bin/ls /bin/rm -d / 2>/dev/null; "${b}/race" ${N} arg /usr/bin/touch ok-file-xx no-file-xx 2>/dev/null`;

for (const decision of ['forbidden', 'allow'] as const) {
  const outcome = decision === 'forbidden' ? 'forbidden it never runs' : 'allowed every attempt runs';
  test(`a thread rewriting an exec's path or argv while it is checked: with the rewritten command ${outcome}`, async (t) => {
    const rules = [`prefix_rule(pattern=["rm"], decision="${decision}")`, `prefix_rule(pattern=["touch", "no-file-xx"], decision="${decision}")`];
    const rig = await startDaemon(execGateOptions({ rules, autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
    t.after(async () => (killAll(), rig.close()));
    const r = await gateSh(rig, RACE(bin), { timeoutMs: 300_000 });
    const [path, arg] = r.stdout.split('\n').filter((l) => l.startsWith('exit=')).map(statuses);
    t.diagnostic(`path flips: ${JSON.stringify(path)}; argv flips: ${JSON.stringify(arg)}`);
    assert.ok(path && arg, `${r.stdout}${r.stderr.slice(0, 2000)}`);
    const total = (s: Record<number, number>) => Object.values(s).reduce((a, b) => a + b, 0);
    assert.equal(total(path), N);
    assert.equal(total(arg), N);
    if (decision === 'forbidden') {
      assert.equal(path[1] ?? 0, 0, `rm ran ${path[1]} times of ${N}`);
      assert.equal(existsSync(join(rig.ws, 'no-file-xx')), false, 'the forbidden touch ran');
    } else {
      // nothing is refused by policy; an attempt is refused or killed only by the TOCTOU check itself
      assert.doesNotMatch(r.stderr, /gate-sh: denied/);
      assert.ok((path[0] ?? 0) + (path[1] ?? 0) > 0 && existsSync(join(rig.ws, 'ok-file-xx')), r.stderr.slice(0, 2000));
    }
  });
}
