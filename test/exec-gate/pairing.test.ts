/**
 * One decision per exec (issue 16, point 2; docs/exec-gate.md, "One decision per exec"): an exec that both
 * layers of the exec gate see is decided, and audited, once — posix_spawn (a vfork child execs what its
 * parent's LD_PRELOAD layer asked about), system(), popen(), and a raw execve syscall from a dynamic program
 * (the kernel layer asks, or answers from a grant it keeps; the new program's constructor is answered from that).
 * And the pairing cannot be
 * forged: a process that gets Run for `true` and then execs rm (itself, or from a vfork child) meets the rm
 * rule. Real daemon, real gate-sh, programs built here.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { gateSh, execGateOptions } from './helpers.js';
import { auditLines, type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

let bin = '';

before(() => {
  bin = mkdtempSync(join(tmpdir(), 'gate-pairing-bin-'));
  const programs = join(ROOT, 'test', 'exec-gate', 'programs');
  const cc = ['-O2', '-Wall', '-Wextra', '-Werror'];
  execFileSync('gcc', [...cc, '-o', join(bin, 'spawner'), join(programs, 'spawner.c')]);
  execFileSync('gcc', [...cc, '-o', join(bin, 'forge'), join(programs, 'forge.c')]);
  // linked with the shims' request code: its request is the one the supervisor rebuilds at the exec
  const shims = join(ROOT, 'shims');
  const request = ['gate-request.c', 'gate-common.c', 'gate-error.c', 'gate-json.c'].map((f) => join(shims, f));
  execFileSync('gcc', [...cc, '-I', shims, '-o', join(bin, 'forge-reply'), join(programs, 'forge-reply.c'), ...request]);
  process.on('exit', () => rmSync(bin, { recursive: true, force: true }));
});

/** The exec-time decisions (audit records of kind "exec" with an action; an escalated run's own record has
 * none) of argv: the record names the program by its path in argv[0] (either layer's: /bin/echo or
 * /usr/bin/echo), the rest is argv as exec'd. */
function execRecords(rig: DaemonProc, argv: string[]): number {
  const rest = JSON.stringify(argv.slice(1));
  // a record too large is kept with its long words cut (src/daemon/audit.ts, CUT_TO)
  const cutRest = JSON.stringify(argv.slice(1).map((w) => (w.length > 2048 ? `${w.slice(0, 2048)}… (${w.length} characters)` : w)));
  let n = 0;
  // (auditLines: a record still being appended is waited for, not read half)
  for (const r of auditLines<Record<string, any>>(rig.paths.auditLog)) {
    if (r.kind === 'exec' && r.action !== undefined && basename(r.argv[0]) === argv[0] && JSON.stringify(r.argv.slice(1)) === (r.cut ? cutRest : rest)) n++;
  }
  return n;
}

/** [name, script, the argv of the exec both layers see] */
const CASES: [string, string, string[]][] = [
  [
    'python os.posix_spawn of python3',
    `python3 -c 'import os; p=os.posix_spawn("/usr/bin/python3", ["python3", "-c", "pass", "m-py"], dict(os.environ)); print("status=%d" % os.waitpid(p, 0)[1])'`,
    ['python3', '-c', 'pass', 'm-py'],
  ],
  ['posix_spawn from a C program', `"$B/spawner" spawn /bin/echo echo m-spawn`, ['echo', 'm-spawn']],
  ['system()', `"$B/spawner" system 'echo m-system'`, ['sh', '-c', 'echo m-system']],
  ['popen()', `"$B/spawner" popen 'echo m-popen'`, ['sh', '-c', 'echo m-popen']],
  ['a raw execve syscall from a dynamic program', `"$B/spawner" raw /bin/echo echo m-raw; echo status=$?`, ['echo', 'm-raw']],
  // the second is answered from the grant the first got, before its environment is read (shims/launch/decide.c):
  // the new program's constructor is answered at its first instruction, from the environment the kernel gave it
  [
    'a raw execve syscall of a program this run was granted',
    `"$B/spawner" raw /bin/echo echo m-raw-first >/dev/null; "$B/spawner" raw /bin/echo echo m-raw-kept; echo status=$?`,
    ['echo', 'm-raw-kept'],
  ],
  // over a datagram's size: both layers ask the daemon over stream.sock, and the daemon pairs them
  [
    'an exec too large for a datagram',
    `x=$(head -c 70000 /dev/zero | tr '\\0' a); /bin/echo m-large "$x" >/dev/null; echo status=$?`,
    ['echo', 'm-large', 'a'.repeat(70_000)],
  ],
];

/** Allow rules make these commands escalate (run outside the turn's sandbox, through the daemon). */
const ESCALATED = ['python3', 'echo', 'sh'].map((p) => `prefix_rule(pattern=["${p}"], decision="allow")`);

for (const [mode, rules, how] of [
  ['workspace-write', [], 'run in place'],
  ['danger-full-access', [], 'run in place'],
  ['workspace-write', ESCALATED, 'escalated by an allow rule'],
] as const) {
  test(`one decision per exec, ${mode}, ${how}: posix_spawn, system(), popen() and a raw execve syscall are each decided once`, async (t) => {
    const rig = await startDaemon(execGateOptions({ rules: [...rules], autoApprove: true, env: { GATE_SANDBOX_MODE: mode } }));
    t.after(async () => (killAll(), rig.close()));
    for (const [name, script, argv] of CASES) {
      const r = await gateSh(rig, `B=${bin}; ${script}`, { timeoutMs: 60_000 });
      assert.match(r.stdout, /status=0/, `${name} (exit ${r.code}): ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /gate-sh:/, `${name}: ${r.stderr}`);
      assert.equal(execRecords(rig, argv), 1, `${name}: decisions of ${JSON.stringify(argv).slice(0, 200)}`);
    }
  });
}

test('the pairing cannot be forged: Run for `true`, then an exec of rm (itself or a vfork child) meets the rm rule', async (t) => {
  for (const decision of ['forbidden', 'allow'] as const) {
    const rig = await startDaemon(
      execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`], autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }),
    );
    t.after(async () => (killAll(), rig.close()));
    for (const how of ['self', 'vfork']) {
      const target = `target-${how}`;
      writeFileSync(join(rig.ws, target), 'x');
      const r = await gateSh(rig, `"${bin}/forge" ${how} /bin/rm rm -f ${target}; echo status=$?`, { timeoutMs: 60_000 });
      assert.match(r.stdout, /^asked=Run$/m, `${how}: ${r.stderr}`);
      if (decision === 'forbidden') {
        assert.ok(existsSync(join(rig.ws, target)), `${how}: rm ran: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, new RegExp(`gate-sh: denied: rm -f ${target}: `), `${how}: ${r.stderr}`);
        assert.match(r.stdout, /^status=126$/m);
      } else {
        assert.equal(existsSync(join(rig.ws, target)), false, `${how}: rm did not run: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /^status=0$/m, r.stderr);
        assert.equal(execRecords(rig, ['rm', '-f', target]), 1, `${how}: rm decided once`);
      }
    }
  }
});

test("a process of the run cannot answer its own exec check: a reply to the supervisor that does not come from the daemon's socket is dropped", async (t) => {
  for (const decision of ['forbidden', 'allow'] as const) {
    const rig = await startDaemon(
      execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`], autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write' } }),
    );
    t.after(async () => (killAll(), rig.close()));
    for (let i = 0; i < 5; i++) {
      const target = `target-${i}`;
      writeFileSync(join(rig.ws, target), 'x');
      const r = await gateSh(rig, `"${bin}/forge-reply" /bin/rm rm -f ${target}; echo status=$?`, { timeoutMs: 60_000 });
      if (decision === 'forbidden') {
        assert.ok(existsSync(join(rig.ws, target)), `round ${i}: rm ran: ${r.stdout}${r.stderr}`);
        assert.doesNotMatch(r.stdout, /^asked=Run$/m, `round ${i}: the forged reply was relayed: ${r.stdout}`);
        assert.match(r.stderr, new RegExp(`gate-sh: denied: rm -f ${target}: `), `round ${i}: ${r.stderr}`);
        assert.match(r.stdout, /^status=126$/m);
      } else {
        assert.equal(existsSync(join(rig.ws, target)), false, `round ${i}: rm did not run: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /^status=0$/m, r.stderr);
      }
    }
  }
});
