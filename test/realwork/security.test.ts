/**
 * The security side of issue 29 does not move: a `forbidden` rule on `rm` still denies it inside make,
 * inside configure and inside `python -c`; the model's own `python -c 'import os; os.system("rm -rf x")'`
 * still asks (the os.system's `rm -rf` is the model's text); an `allow` rule takes the model's own `rm` out
 * of the sandbox but never a build's (its MAKEFLAGS no longer matter: nothing crosses). Each denial beside
 * the same command running where it is allowed.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killAll, startDaemon, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { realworkDaemon } from './helpers.js';

after(killAll);

const RM_FORBIDDEN = 'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")';
const MAKEFILE = 'all:\n\tmkdir -p build && touch build/x\nclean:\n\trm -rf build\n';
/** a configure script as autoconf writes them: checks that clean up with `rm -f` */
const CONFIGURE = '#!/bin/sh\necho "checking for conftest..."\necho "int x;" > conftest.c\nrm -f conftest.c\necho "configure: done"\n';
const INLINE = `python3 -c 'import os; os.system("rm -rf x")'`;

const gsh = (d: DaemonProc, script: string, cwd = d.ws) => run(GATE_SH, ['-lc', script], { env: d.env, cwd, timeoutMs: 60_000 });

function project(d: DaemonProc): void {
  writeFileSync(join(d.ws, 'Makefile'), MAKEFILE);
  writeFileSync(join(d.ws, 'configure'), CONFIGURE, { mode: 0o755 });
  mkdirSync(join(d.ws, 'x'), { recursive: true });
}

test('a forbidden rule on rm holds inside make, configure and python -c; without it the same commands run', { timeout: 240_000 }, async (t) => {
  for (const mode of ['workspace-write', 'danger-full-access'] as const) {
    const free = await realworkDaemon(mode);
    const strict = await realworkDaemon(mode, [RM_FORBIDDEN]);
    t.after(async () => (await free.close(), await strict.close()));
    for (const d of [free, strict]) project(d);
    const forbidden = (d: DaemonProc) => d === strict;
    for (const d of [free, strict]) {
      const make = await gsh(d, 'make && make clean');
      const configure = await gsh(d, './configure && sh ./configure');
      if (forbidden(d)) {
        assert.match(make.stderr, /gate-sh: denied: rm -rf build: Execution forbidden by policy/, mode);
        assert.notEqual(make.code, 0);
        assert.ok(existsSync(join(d.ws, 'build', 'x')), mode);
        assert.match(configure.stderr, /gate-sh: denied: rm -f conftest\.c: Execution forbidden by policy/, mode);
        assert.ok(existsSync(join(d.ws, 'conftest.c')), mode);
      } else {
        assert.equal(make.code, 0, make.stderr);
        assert.equal(existsSync(join(d.ws, 'build')), false);
        assert.equal(configure.code, 0, configure.stderr);
        assert.equal(configure.stdout, 'checking for conftest...\nconfigure: done\n'.repeat(2));
        assert.equal(existsSync(join(d.ws, 'conftest.c')), false);
      }
    }
    // the model's own python -c: without a rule its rm -rf is asked (no approver: denied), with the rule
    // forbidden; either way x stays. (Pre-flight lets the inline code start: its execs are decided then.)
    for (const d of [free, strict]) {
      const r = await gsh(d, INLINE);
      // (asked at the shell os.system starts, whose string the danger check reads — no approver: denied — or
      // forbidden at its rm, by the rule, which approving the shell would still meet)
      const at = forbidden(d) ? '(sh -c rm -rf x: approval needed|rm -rf x: Execution forbidden by policy)' : '(sh -c )?rm -rf x: approval needed';
      assert.match(r.stderr, new RegExp(`gate-sh: denied: ${at}`), mode);
      assert.ok(existsSync(join(d.ws, 'x')), mode);
    }
  }
});

test("the model's own python -c os.system('rm -rf x') asks, and runs once approved", { timeout: 120_000 }, async (t) => {
  const d = await startDaemon({
    workspace: 'w',
    autoApprove: true,
    env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' },
  });
  t.after(() => d.close());
  mkdirSync(join(d.ws, 'x'));
  const r = await gsh(d, INLINE);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(existsSync(join(d.ws, 'x')), false);
  const asked = d.prompts.filter((p) => /\brm -rf x$/.test(p.display ?? ''));
  assert.ok(asked.length >= 1, JSON.stringify(d.prompts));
  // and python -c itself was not asked about: only the command its code ran
  assert.ok(!d.prompts.some((p) => JSON.stringify(p).includes('import os')), JSON.stringify(d.prompts));
});

test("an allow rule takes the model's own rm out of the sandbox, never make's (whose MAKEFLAGS then do not matter)", { timeout: 120_000 }, async (t) => {
  const config = 'sandbox_mode = "workspace-write"\napproval_policy = "on-request"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';
  const d = await startDaemon({ workspace: 'w', config, rules: ['prefix_rule(pattern=["rm"], decision="allow")'], env: { GATE_NO_AUTOSTART: '1' } });
  t.after(() => d.close());
  // files outside the sandbox's writable folders (the workspace is; its parent, under /tmp, is not here)
  const outside = join(d.te.dir, 'outside');
  mkdirSync(outside);
  for (const f of ['by-make', 'by-model', 'by-make-2']) writeFileSync(join(outside, f), '');
  writeFileSync(join(d.ws, 'Makefile'), `clean:\n\trm -f ${outside}/by-make\n\trm -f build.o\n`);
  writeFileSync(join(d.ws, 'build.o'), '');
  const make = await gsh(d, 'make clean');
  // in place: the sandbox refuses the file outside, the one inside goes; no prompt about MAKEFLAGS (what
  // is asked, and denied without an approver, is the on-failure rerun of the model's `make clean`)
  assert.match(make.stderr, /rm: cannot remove '[^']*by-make': Read-only file system/);
  assert.doesNotMatch(make.stderr, /code-loading|gate-sh: denied/);
  assert.ok(existsSync(join(outside, 'by-make')));
  const inside = await gsh(d, 'make -i clean');
  assert.equal(existsSync(join(d.ws, 'build.o')), false, inside.stderr);
  // the model's own rm, allowed by the rule: escalated, outside the sandbox
  const own = await gsh(d, `rm -f ${outside}/by-model`);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(existsSync(join(outside, 'by-model')), false);
  // the audit log says why make's ran in place
  const audit = readFileSync(d.paths.auditLog, 'utf8');
  assert.match(audit, /"argv":\["\/(usr\/)?bin\/rm","-f","[^"]*by-make"\][^\n]*"action":"Run"/);
});

test("an answer reused below make (its rm -rf, its sh -c) never reaches the model's own commands of the same run", { timeout: 180_000 }, async (t) => {
  for (const mode of ['workspace-write', 'danger-full-access'] as const) {
    const d = await realworkDaemon(mode);
    t.after(() => d.close());
    for (const f of ['a', 'b', 'c', 'x', 'y']) mkdirSync(join(d.ws, f));
    // three recipes, each its own shell and rm: the second and third are answered from make's scope
    writeFileSync(join(d.ws, 'Makefile'), 'clean:\n\trm -rf a\n\trm -rf b\n\trm -rf c\n');
    const spawned = `python3 -c 'import subprocess; subprocess.run(["rm", "-rf", "y"])'`;
    const r = await gsh(d, `make -s clean; ${INLINE}; ${spawned}; echo done`);
    assert.equal(r.stdout, 'done\n', mode);
    for (const f of ['a', 'b', 'c']) assert.equal(existsSync(join(d.ws, f)), false, `${mode}: make's rm -rf ${f}`);
    const audit = readFileSync(d.paths.auditLog, 'utf8').split('\n');
    const reused = audit.filter((l) => /"reused":true/.test(l) && /"argv":\["\/(usr\/)?bin\/rm","-rf","[bc]"\]/.test(l));
    assert.ok(reused.length >= 1, `${mode}: make's rm answered from its scope:\n${audit.join('\n')}`);
    // the model's own rm -rf, by python -c's os.system (a sh -c) and its subprocess (rm itself), after make's:
    // asked (no approver: denied), not run
    assert.match(r.stderr, /gate-sh: denied: (sh -c )?rm -rf x: approval needed/, mode);
    assert.match(r.stderr, /gate-sh: denied: rm -rf y: approval needed/, mode);
    assert.ok(existsSync(join(d.ws, 'x')) && existsSync(join(d.ws, 'y')), mode);
  }
});

test("the model's own code handed over by stdin or a descriptor is the model's text: its rm -rf asked; run when a rule allows it", { timeout: 240_000 }, async (t) => {
  // written to a file and run, the same code is a program's own (sandboxed, not asked): that stays so
  const inline = [
    `make -s -f - <<< $'all:\\n\\trm -rf x'`,
    `CMD='rm -rf x' make -s --eval=$'all:\\n\\t$(CMD)' all`,
    `python3 /dev/fd/0 <<< 'import os; os.system("rm -rf x")'`,
    `python3 <(echo 'import os; os.system("rm -rf x")')`,
    `bash <(echo 'rm -rf x')`,
    `echo 'BEGIN { system("rm -rf x") }' | awk -f /dev/stdin`,
    `npx -c 'rm -rf x'`,
  ];
  const free = await realworkDaemon('workspace-write');
  // (os.system and awk's system() hand the command to `sh -c`, whose string the danger check reads: allowed too)
  const allowed = await realworkDaemon('workspace-write', [
    'prefix_rule(pattern=["rm"], decision="allow")',
    'prefix_rule(pattern=["sh", "-c", "rm -rf x"], decision="allow")',
  ]);
  t.after(async () => (await free.close(), await allowed.close()));
  for (const script of inline) {
    for (const d of [free, allowed]) {
      mkdirSync(join(d.ws, 'x'), { recursive: true });
      const r = await gsh(d, script);
      if (d === free) {
        assert.match(r.stderr, /gate-sh: denied: (sh -c )?rm -rf x: approval needed/, `${script}\n${r.stderr}`);
        assert.ok(existsSync(join(d.ws, 'x')), script);
      } else assert.equal(existsSync(join(d.ws, 'x')), false, `${script}\n${r.stderr}`);
    }
  }
  // the same rm -rf in a makefile the script wrote: make's own file, run in the sandbox unasked
  mkdirSync(join(free.ws, 'x'), { recursive: true });
  const own = await gsh(free, `printf 'all:\\n\\trm -rf x\\n' > Mk; make -s -f Mk`);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(existsSync(join(free.ws, 'x')), false);
});
