/**
 * The kernel layer decides first (docs/exec-gate.md, "The kernel layer decides first"): in a kernel-gated
 * run the LD_PRELOAD layer sends no request before an exec; the kernel layer decides it, and a denial or an
 * escalation of an exec the layer made comes back to the layer, which says the denial in the process's own
 * words (its stderr: `2>/dev/null` silences it, as bash's own message) or escalates with its descriptors.
 * Each exec is decided once. A mark forged by a static program changes nothing but the message, and the
 * marks a static program keeps from its own exec do not pass to its next one. With the rule allowing rm,
 * the same execs run (so the test can fail). Real daemon, real gate-sh, real bubblewrap.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { asInlineCode, escFixture, gateSh, execGateOptions } from './helpers.js';
import { auditLines, type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

let bin = '';

before(() => {
  bin = mkdtempSync(join(tmpdir(), 'gate-first-bin-'));
  const programs = join(ROOT, 'test', 'exec-gate', 'programs');
  execFileSync('gcc', ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, 'forge-ask'), join(programs, 'forge-ask.c')]);
  // dynamic: the LD_PRELOAD layer is loaded into it
  execFileSync('gcc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, 'spawner'), join(programs, 'spawner.c')]);
  process.on('exit', () => rmSync(bin, { recursive: true, force: true }));
});

// (no rule names bash: the exec of /bin/bash that inFile makes is the model's own, and such a rule would
// escalate the whole script with it)

/** Audit records of kind "exec" with an action, for a program (by name) and the rest of argv. */
function execRecords(rig: DaemonProc, name: string, rest: string[]): Record<string, unknown>[] {
  // (auditLines: a record still being appended is waited for, not read half)
  return auditLines<Record<string, any>>(rig.paths.auditLog)
    .filter((r) => r.kind === 'exec' && r.action !== undefined && basename(r.argv[0]) === name && JSON.stringify(r.argv.slice(1)) === JSON.stringify(rest));
}

/** `script` as the model's own inline code (helpers.ts, asInlineCode): pre-flight sees only python3; every exec
 * in it meets the exec gate unsettled, as the model's own command. */
function inFile(rig: DaemonProc, script: string) {
  return gateSh(rig, `export B=${bin}; ${asInlineCode(script)}`, { timeoutMs: 60_000 });
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: a denied exec (from bash, posix_spawn) is said once, in the process's own stderr, and decided once; allowed, it runs`, async (t) => {
    for (const decision of ['forbidden', 'allow'] as const) {
      const rules = [`prefix_rule(pattern=["rm"], decision="${decision}")`];
      const rig = await startDaemon(execGateOptions({ rules, env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      writeFileSync(join(rig.ws, 'a'), '');
      writeFileSync(join(rig.ws, 'b'), '');
      writeFileSync(join(rig.ws, 's'), '');
      const r = await inFile(rig, 'x=rm; $x -f a; echo "a=$?"; $x -f b 2>/dev/null; echo "b=$?"; "$B/spawner" spawn /bin/rm rm -f s; echo "s=$?"');
      assert.equal(r.code, 0, r.stderr);
      if (decision === 'forbidden') {
        assert.equal(r.stdout, 'a=126\nb=126\ns=126\n', r.stderr);
        assert.ok(existsSync(join(rig.ws, 'a')) && existsSync(join(rig.ws, 'b')) && existsSync(join(rig.ws, 's')), 'a forbidden rm ran');
        // posix_spawn: the spawn fails with EACCES, the layer's words said from the parent
        assert.match(r.stderr, /gate-sh: denied: rm -f s: [^\n]*\nspawner: posix_spawn: Permission denied/);
        // the layer's words, once, for the exec whose stderr was not silenced (none from the supervisor)
        assert.equal((r.stderr.match(/gate-sh: denied: rm -f a: /g) ?? []).length, 1, r.stderr);
        assert.doesNotMatch(r.stderr, /rm -f b/);
      } else {
        assert.equal(r.stdout, 'a=0\nb=0\nstatus=0\ns=0\n', r.stderr);
        assert.ok(!existsSync(join(rig.ws, 'a')) && !existsSync(join(rig.ws, 'b')) && !existsSync(join(rig.ws, 's')), 'an allowed rm did not run');
      }
      for (const f of ['a', 'b', 's']) assert.equal(execRecords(rig, 'rm', ['-f', f]).length, 1, `rm -f ${f}: decided once (${decision})`);
    }
  });
}

test('an exec from bash that escalates is decided once and runs through the daemon with the caller\'s pipe', async (t) => {
  const esc = escFixture();
  const rig = await startDaemon(execGateOptions({ rules: [`prefix_rule(pattern=["${esc}"], decision="allow")`] }));
  t.after(async () => (killAll(), rig.close()));
  writeFileSync(join(rig.ws, 'in.txt'), 'hello\n');
  const r = await inFile(rig, `${esc} cat < in.txt | cat; echo "rc=\${PIPESTATUS[0]}"`);
  assert.equal(r.stdout, 'HELLO\nrc=0\n', r.stderr);
  const recs = execRecords(rig, basename(esc), ['cat']);
  assert.equal(recs.length, 1, JSON.stringify(recs));
  assert.match(String(recs[0].action), /^Escalate/);
});

test('a mark forged by a static program: a forbidden exec still does not run (quietly), an escalation fails; run in place, it runs', async (t) => {
  // rm forbidden; rm allowed by an explicit rule (which escalates it: the daemon would run it); touch, which
  // no rule names (the sandbox heuristic runs it in place)
  for (const [decision, program, runs] of [
    ['forbidden', 'rm', false],
    ['allow', 'rm', false],
    ['allow', 'touch', true],
  ] as const) {
    const rig = await startDaemon(execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`] }));
    t.after(async () => (killAll(), rig.close()));
    writeFileSync(join(rig.ws, 'c'), '');
    const args = program === 'rm' ? ['-f', 'c'] : ['d'];
    const r = await inFile(rig, `"$B/forge-ask" /bin/${program} ${program} ${args.join(' ')}; echo "rc=$?"`);
    assert.equal(r.code, 0, r.stderr);
    const what = `${program}, rm ${decision}`;
    assert.equal(r.stdout, runs ? 'rc=0\n' : 'rc=126\n', `${what}: ${r.stderr}`);
    if (program === 'rm') assert.ok(existsSync(join(rig.ws, 'c')), `${what}: rm ran`);
    else assert.ok(existsSync(join(rig.ws, 'd')), `${what}: touch did not run`);
    if (!runs) assert.match(r.stderr, /forge-ask: execv: /);
    assert.doesNotMatch(r.stderr, /gate-sh: denied/);
    assert.equal(execRecords(rig, program, args).length, 1, what);
  }
});

test('a static program that execs without a fork keeps its own exec\'s marks: its forbidden rm is denied with the message; allowed, it runs', async (t) => {
  for (const decision of ['forbidden', 'allow'] as const) {
    const rig = await startDaemon(execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`] }));
    t.after(async () => (killAll(), rig.close()));
    writeFileSync(join(rig.ws, 'e'), '');
    const r = await inFile(rig, '"$B/forge-ask" --keep /bin/rm rm -f e; echo "rc=$?"');
    assert.equal(r.code, 0, r.stderr);
    if (decision === 'forbidden') {
      assert.equal(r.stdout, 'rc=126\n', r.stderr);
      assert.ok(existsSync(join(rig.ws, 'e')), 'a forbidden rm ran');
      assert.match(r.stderr, /gate-sh: denied: rm -f e: /);
    } else {
      // an allow rule escalates; the kernel layer lets it run in place (no LD_PRELOAD layer to escalate)
      assert.equal(r.stdout, 'rc=0\n', r.stderr);
      assert.ok(!existsSync(join(rig.ws, 'e')), 'an allowed rm did not run');
    }
    assert.equal(execRecords(rig, 'rm', ['-f', 'e']).length, 1);
  }
});

test('an exec the LD_PRELOAD layer did not make, escalated by a rule: the new program escalates (the supervisor says so); unescalated, it stays in the sandbox', async (t) => {
  // a static program's exec: the kernel layer decides it, lets the Escalate go on in place and leaves a
  // word for touch's constructor, which escalates out of the turn's sandbox with the token
  for (const escalated of [true, false]) {
    const rules = [...(escalated ? ['prefix_rule(pattern=["touch"], decision="allow")'] : [])];
    const config = 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';
    const rig = await startDaemon(execGateOptions({ rules, config }));
    t.after(async () => (killAll(), rig.close()));
    const outside = join(rig.te.dir, 'outside-touch');
    const r = await inFile(rig, `"$B/forge-ask" --keep /usr/bin/touch touch ${outside}; echo "rc=$?"`);
    assert.equal(r.stdout, escalated ? 'rc=0\n' : 'rc=1\n', r.stderr);
    assert.equal(existsSync(outside), escalated, escalated ? 'the escalated touch did not leave the sandbox' : 'touch left the sandbox');
    assert.equal(execRecords(rig, 'touch', [outside]).length, 1);
  }
});
