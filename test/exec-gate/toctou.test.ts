/**
 * The kernel layer's argv TOCTOU (docs/exec-gate.md, "argv rewritten between check and exec"): the kernel
 * copies an exec's path and argv from the process's memory after the supervisor has read them and answered,
 * so another thread sharing that memory can rewrite them in between. A static program (no LD_PRELOAD layer)
 * whose thread flips the exec'd path between /bin/ls and /bin/rm, or argv[1] between an allowed and a
 * forbidden file name, 200 times each: with the rewritten exec forbidden, rm and the forbidden touch must
 * never run; with them allowed, every attempt runs one of the two. Real daemon, real gate-sh, the program
 * built here with gcc -static -pthread. Also: a 32-bit program, whose argv and environment the follow reads
 * through /proc (not from its stack), runs with its arguments, and does not run when forbidden. And a
 * static program that vforks and execvp's over a PATH whose first entries do not exist (as a compiler
 * driver starts its passes, without the LD_PRELOAD layer): each failed attempt is followed too, and the
 * program's next attempt, made before that follow ended, is not mistaken for a rewrite: every one runs;
 * forbidden, none does.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { execGateOptions, gateSh } from './helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

let bin = '';

before(() => {
  bin = mkdtempSync(join(tmpdir(), 'gate-toctou-bin-'));
  execFileSync('gcc', ['-static', '-pthread', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, 'race'), join(ROOT, 'test', 'exec-gate', 'programs', 'race.c')]);
  execFileSync('gcc', ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, 'vfork-execvp'), join(ROOT, 'test', 'exec-gate', 'programs', 'vfork-execvp.c')]);
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

// A process another one traces (a debugger in the run: here its parent, PTRACE_TRACEME) cannot be followed to
// its exec: the supervisor cannot seize it, and its tracer can rewrite what it exec'd after the check. Its
// exec is refused, with the reason (fail closed); the same program untraced runs (the tests above).
test('a traced process flipping its exec\'s path (its parent its debugger): rm forbidden never runs; every exec is refused, saying why', async (t) => {
  const rules = ['prefix_rule(pattern=["rm"], decision="forbidden")'];
  const rig = await startDaemon(execGateOptions({ rules, autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  t.after(async () => (killAll(), rig.close()));
  const r = await gateSh(rig, `"${bin}/race" ${N} traced-path /bin/ls /bin/rm -d / 2>/dev/null; "${bin}/race" 1 traced-path /bin/ls /bin/rm -d /`, { timeoutMs: 300_000 });
  const [many, one] = r.stdout.split('\n').filter((l) => l.startsWith('exit=')).map(statuses);
  t.diagnostic(`traced path flips: ${JSON.stringify(many)}`);
  assert.ok(many && one, `${r.stdout}${r.stderr.slice(0, 2000)}`);
  assert.equal(many[1] ?? 0, 0, `rm ran ${many[1]} times of ${N}`);
  assert.equal(many[126] ?? 0, N, `every traced exec is refused: ${JSON.stringify(many)}`);
  assert.match(r.stderr, /exec gate: .*: not run: it cannot be followed to its exec: it is traced by another process/);
});

// The follow reads a new program's argv and environment from its first stack; a 32-bit program has another
// register set and 4-byte pointers, so its are read from /proc/<pid>/cmdline and environ instead. Either way
// what runs is compared with what was decided: the 32-bit program runs with its arguments (it exits with its
// argc), and with it forbidden it does not run at all.
const I386_EXIT_ARGC = '.globl _start\n_start:\n  movl (%esp), %ebx\n  movl $1, %eax\n  int $0x80\n';

for (const decision of ['allow', 'forbidden'] as const) {
  test(`a 32-bit program exec'd from a 64-bit one is followed through /proc: ${decision === 'allow' ? 'it runs with its arguments' : 'forbidden, it never runs'}`, { skip: process.arch !== 'x64' && 'the program is i386 code' }, async (t) => {
    const src = join(bin, 'argc32.S');
    writeFileSync(src, I386_EXIT_ARGC);
    execFileSync('gcc', ['-m32', '-nostdlib', '-static', '-o', join(bin, 'argc32'), src]);
    // a kernel booted without i386 emulation (ia32_emulation=0) runs no such program, gated or not
    const direct = spawnSync('/bin/sh', ['-c', `"${bin}/argc32" a b c`]);
    if (direct.status !== 4) {
      t.skip(`this kernel does not run the i386 program outside the gate either (status ${direct.status}: ${direct.stderr.toString().trim()})`);
      return;
    }
    // allowed: no rule (the sandbox's heuristic runs it in place); an allow rule would ask to run it outside
    const rules = decision === 'forbidden' ? ['prefix_rule(pattern=["argc32"], decision="forbidden")'] : [];
    const rig = await startDaemon(execGateOptions({ rules, autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
    t.after(async () => (killAll(), rig.close()));
    // the name is known only at run time: the script is approved (autoApprove), the exec gate decides the program
    const r = await gateSh(rig, `P=argc32; "${bin}/$P" a b c; echo "status=$?"`, { timeoutMs: 60_000 });
    if (decision === 'allow') {
      assert.match(r.stdout, /^status=4$/m, r.stderr);
      assert.doesNotMatch(r.stderr, /rewritten|killed/);
    } else {
      assert.match(r.stdout, /^status=126$/m, r.stderr);
      assert.match(r.stderr, /gate-sh: denied: \S*argc32 a b c: /);
    }
  });
}

test('vfork and execvp over missing PATH entries (no LD_PRELOAD layer): every attempt runs; forbidden, none does', async (t) => {
  for (const decision of ['allow', 'forbidden'] as const) {
    const rules = [`prefix_rule(pattern=["rm"], decision="${decision}")`];
    const rig = await startDaemon(execGateOptions({ rules, autoApprove: true, env: { GATE_SANDBOX_MODE: 'danger-full-access' } }));
    t.after(async () => (killAll(), rig.close()));
    // rm -f of a file that is not there: exits 0 when it runs
    const command = decision === 'allow' ? 'true' : 'rm -f none-such';
    const r = await gateSh(rig, `PATH=/nx1:/nx2:/nx3:$PATH "${bin}/vfork-execvp" 300 ${command}`, { timeoutMs: 300_000 });
    if (decision === 'allow') {
      assert.equal(r.stdout, 'ok=300 of 300\n', r.stderr.slice(0, 2000));
      assert.doesNotMatch(r.stderr, /rewritten/);
    } else {
      assert.match(r.stdout, /^ok=0 of 300 first-failure=exit 127$/m, r.stderr.slice(0, 2000));
      assert.match(r.stderr, /gate-sh: denied: rm -f none-such: /);
    }
  }
});
