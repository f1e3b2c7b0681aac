/**
 * Answers reused by the run's supervisor (issue 16; docs/exec-gate.md, "Answers reused"): a Run that holds
 * for any argv of a program is given again by the supervisor for the same run, path, name and file, each
 * such exec still in the audit log (marked reused) — and never once a rule changed, the file changed at
 * that path (rewritten in place or replaced), a symlink there was pointed elsewhere, or the program is
 * called by another name. Real daemon, real gate-sh, real sandbox; each denial is shown next to the same
 * script running when the rule allows it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, } from 'node:path';
import { auditRecords as audit, execsOf, gateSh, execGateOptions } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';


for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: a program's Run is reused for other argv and audited each time; a rule added mid-run is in force for the next exec`, async (t) => {
    for (const change of ['forbid tool', 'no change'] as const) {
      const rig = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      const tool = join(rig.ws, 'tool');
      const running = gateSh(
        rig,
        `cp /bin/true ./tool; for i in 1 2 3; do ./tool $i; done; while [ ! -e go ]; do sleep 0.05; done; ./tool 4; echo status=$?`,
        { timeoutMs: 60_000 },
      );
      try {
        await waitFor(() => execsOf(rig, tool).length >= 3 || undefined, 'three execs of tool');
        assert.deepEqual(execsOf(rig, tool), [
          [['1'], false],
          [['2'], true],
          [['3'], true],
        ]);
        if (change === 'forbid tool') {
          const reloads = audit(rig).filter((r) => r.kind === 'reload').length;
          writeFileSync(join(rig.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["tool"], decision="forbidden")\n');
          await waitFor(() => audit(rig).filter((r) => r.kind === 'reload').length > reloads || undefined, 'the rules to reload');
        }
      } finally {
        writeFileSync(join(rig.ws, 'go'), ''); // the script ends whatever happened above
      }
      const r = await running;
      if (change === 'forbid tool') {
        assert.match(r.stdout, /^status=126$/m, r.stderr);
        assert.match(r.stderr, /gate-sh: denied: \S*tool 4: /);
        assert.deepEqual(execsOf(rig, tool).at(-1), [['4'], false]);
      } else {
        assert.match(r.stdout, /^status=0$/m, r.stderr);
        assert.deepEqual(execsOf(rig, tool).at(-1), [['4'], true]);
      }
    }
  });

  test(`${mode}: a file changed at a reused path, or a program called by another name, is decided again (rm forbidden, then allowed)`, async (t) => {
    for (const decision of ['forbidden', 'allow'] as const) {
      const rig = await startDaemon(execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`], env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      for (const v of ['a', 'b', 'c', 'd']) writeFileSync(join(rig.ws, `victim-${v}`), 'x');
      const r = await gateSh(
        rig,
        [
          // rewritten in place: the same inode, other bytes
          'cp /bin/true ./t1; ./t1; ./t1 x; cat /bin/rm > ./t1; ./t1 -f victim-a; echo a=$?',
          // replaced by a rename: another inode at the same path
          'cp /bin/true ./t2; ./t2; ./t2 x; cp /bin/rm ./new; mv ./new ./t2; ./t2 -f victim-b; echo b=$?',
          // called as rm (argv[0]): a rule about rm applies to it
          'cp /bin/true ./t3; ./t3; ./t3 x; (exec -a rm ./t3 -f victim-c); echo c=$?',
          // a symlink pointed elsewhere: its target's rules apply
          'ln -s /bin/true ./t4; ./t4; ./t4 x; ln -sf /bin/rm ./t4; ./t4 -f victim-d; echo d=$?',
        ].join('\n'),
        { timeoutMs: 60_000 },
      );
      for (const n of ['t1', 't2', 't3', 't4']) assert.deepEqual(execsOf(rig, join(rig.ws, n)).slice(0, 2), [[[], false], [['x'], true]], `${n} reused before the change`);
      if (decision === 'forbidden') {
        for (const v of ['a', 'b', 'c', 'd']) {
          assert.match(r.stdout, new RegExp(`^${v}=126$`, 'm'), `${v}: ${r.stdout}${r.stderr}`);
          assert.ok(existsSync(join(rig.ws, `victim-${v}`)), `victim-${v} was removed`);
        }
        assert.match(r.stderr, /gate-sh: denied: \S*t1 -f victim-a: /);
      } else {
        for (const v of ['a', 'b', 'c', 'd']) assert.match(r.stdout, new RegExp(`^${v}=0$`, 'm'), `${v}: ${r.stdout}${r.stderr}`);
        for (const v of ['a', 'b', 'd']) assert.equal(existsSync(join(rig.ws, `victim-${v}`)), false, `victim-${v}: rm did not run`);
      }
    }
  });
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: a reused exec's record is written by the supervisor before the exec goes on (the daemon stopped meanwhile), a long one too; one it cannot write reaches the log through the daemon`, async (t) => {
    const rig = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: mode } }));
    const daemon = Number(readFileSync(rig.paths.pidFile, 'utf8'));
    t.after(async () => (process.kill(daemon, 'SIGCONT'), killAll(), rig.close()));
    const tool = join(rig.ws, 'tool');
    // a record over a page (the supervisor wrote at most one until b/hdmn): written there whole all the same
    const long = '0'.repeat(5000);
    for (const f of ['f1', 'f2']) execFileSync('mkfifo', [join(rig.ws, f)]);
    // an argument that is not UTF-8: no record the supervisor can write (JSON text is UTF-8): the daemon is told;
    // and a cwd that is not UTF-8, which the supervisor reads once the exec is answered: told at the exec's end
    const script = [
      `cp /bin/true ./tool; ./tool 1; ./tool 2; read -r x < f1; ./tool 3; ./tool "$(printf '%05000d' 0)"; ./tool "$(printf 'x\\377')"`,
      `: > ran; read -r x < f2`,
      `PATH="$PWD:$PATH"; tool 5; tool 6; d="$(printf 'd\\377')"; mkdir "$d"; cd "$d"; tool 7; echo status=$?`,
    ].join('; ');
    const running = gateSh(rig, script, { timeoutMs: 60_000 });
    try {
      await waitFor(() => execsOf(rig, tool).length >= 2 || undefined, 'two execs of tool');
      process.kill(daemon, 'SIGSTOP');
      writeFileSync(join(rig.ws, 'f1'), 'go\n');
      await waitFor(() => existsSync(join(rig.ws, 'ran')) || undefined, 'the script past tool 3');
      assert.deepEqual(execsOf(rig, tool), [
        [['1'], false],
        [['2'], true],
        [['3'], true],
        [[long], true],
      ]);
      process.kill(daemon, 'SIGCONT');
      await waitFor(() => execsOf(rig, tool).length >= 5 || undefined, 'the one not UTF-8 audited by the daemon');
      const last = execsOf(rig, tool).at(-1)!;
      assert.equal(last[1], true, JSON.stringify(last));
      assert.equal(last[0].length, 1);
    } finally {
      process.kill(daemon, 'SIGCONT');
      writeFileSync(join(rig.ws, 'f2'), 'go\n');
    }
    const r = await running;
    assert.match(r.stdout, /^status=0$/m, r.stderr);
    // (tool 6 reused the Run tool 5 got; tool 7 too, its record written by the daemon, told at its exec's end)
    await waitFor(() => execsOf(rig, tool).length >= 8 || undefined, 'the one run in a cwd not UTF-8 audited by the daemon');
    assert.deepEqual(execsOf(rig, tool).slice(6), [
      [['6'], true],
      [['7'], true],
    ]);
    // every line of the log is whole JSON (the supervisor's and the daemon's appends did not interleave)
    assert.ok(audit(rig).length > 0);
  });
}

test('a new daemon ends the reuse of the answers its predecessor gave: a rule written while no daemon ran is in force for the next exec', async (t) => {
  for (const change of ['forbid tool', 'no change'] as const) {
    const first = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: 'danger-full-access' } }));
    let rig = first;
    t.after(async () => (killAll(), rig.close()));
    const tool = join(rig.ws, 'tool');
    const running = gateSh(rig, `cp /bin/true ./tool; ./tool 1; ./tool 2; while [ ! -e go ]; do sleep 0.05; done; ./tool 3; echo status=$?`, {
      timeoutMs: 60_000,
    });
    try {
      await waitFor(() => execsOf(rig, tool).length >= 2 || undefined, 'two execs of tool');
      assert.deepEqual(execsOf(rig, tool), [
        [['1'], false],
        [['2'], true],
      ]);
      await first.kill();
      if (change === 'forbid tool') writeFileSync(join(rig.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["tool"], decision="forbidden")\n');
      rig = await startDaemon({ ...execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: 'danger-full-access' } }), te: first.te, rules: undefined });
    } finally {
      writeFileSync(join(first.ws, 'go'), '');
    }
    const r = await running;
    if (change === 'forbid tool') {
      assert.match(r.stdout, /^status=126$/m, r.stderr);
      assert.match(r.stderr, /gate-sh: denied: \S*tool 3: /);
    } else {
      assert.match(r.stdout, /^status=0$/m, r.stderr);
      // asked again: the new daemon raised the epoch, so the old grant is not used
      assert.deepEqual(execsOf(rig, tool).at(-1), [['3'], false]);
    }
  }
});
