/**
 * Answers handed to a run's supervisor up front (issue 29, "Figures"; docs/exec-gate.md, "Answers handed
 * over up front"): a program given a Run for any argv in one run of the session is decided again for the next
 * run, with that run's second such answer, and its first exec there is answered by the supervisor (audited,
 * marked reused) — never once a rule names it, nor when the file at that path is rewritten after the
 * hand-over (a copy of rm there is judged as rm). A program the next script names as a command comes with its
 * plan (docs/exec-gate.md, "Answers handed over with the plan"), and its first exec there asks nothing. Real
 * daemon, real gate-sh, real sandbox; each denial is shown next to the same script running when the rule
 * allows it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, } from 'node:path';
import { auditRecords as audit, execsOf, gateSh, execGateOptions } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';


/** The first run: tool, a and b each answered once (learned); they stay in the workspace for the next. */
const FIRST = 'for t in tool a b; do cp /bin/true ./$t; ./$t first; done; echo first=$?';
/** The next run's first two any-argv answers (a, b) bring the presets. */
const WARM = 'for t in a b; do ./$t next; done';

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: a program answered in one run is handed to the next up front (reused on its first exec there); not once a rule names it`, async (t) => {
    for (const change of ['no change', 'forbid tool'] as const) {
      const rig = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      const tool = join(rig.ws, 'tool');
      const first = await gateSh(rig, FIRST, { timeoutMs: 60_000 });
      assert.match(first.stdout, /^first=0$/m, first.stderr);
      assert.deepEqual(execsOf(rig, tool), [[['first'], false]]);
      if (change === 'forbid tool') {
        const reloads = audit(rig).filter((r) => r.kind === 'reload').length;
        writeFileSync(join(rig.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["tool"], decision="forbidden")\n');
        await waitFor(() => audit(rig).filter((r) => r.kind === 'reload').length > reloads || undefined, 'the rules to reload');
      }
      // (named at run time, so that pre-flight does not settle it: the exec decides)
      const r = await gateSh(rig, `${WARM}; for t in tool; do ./$t next; done; echo status=$?`, { timeoutMs: 60_000 });
      if (change === 'forbid tool') {
        assert.match(r.stdout, /^status=126$/m, r.stderr);
        assert.match(r.stderr, /gate-sh: denied: \S*tool next: /);
        assert.deepEqual(execsOf(rig, tool).at(-1), [['next'], false]);
      } else {
        assert.match(r.stdout, /^status=0$/m, r.stderr);
        // its first exec in this run, answered by the supervisor from the preset
        assert.deepEqual(execsOf(rig, tool).at(-1), [['next'], true]);
      }
    }
  });

  // the third run's presets come from answers the daemon remembered (src/daemon/reuse-presets.ts, PresetMemo)
  test(`${mode}: a preset remembered from the run before holds only while the file and the rules are the same: rewritten into a copy of rm, or named by a rule, it is decided again`, async (t) => {
    for (const change of ['no change', 'tool becomes rm', 'forbid tool'] as const) {
      const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      const tool = join(rig.ws, 'tool');
      writeFileSync(join(rig.ws, 'victim'), 'x');
      const first = await gateSh(rig, FIRST, { timeoutMs: 60_000 });
      assert.match(first.stdout, /^first=0$/m, first.stderr);
      const second = await gateSh(rig, `${WARM}; for t in tool; do ./$t next; done; echo status=$?`, { timeoutMs: 60_000 });
      assert.match(second.stdout, /^status=0$/m, second.stderr);
      assert.deepEqual(execsOf(rig, tool).at(-1), [['next'], true]);
      if (change === 'tool becomes rm') writeFileSync(tool, readFileSync('/bin/rm')); // in place: same inode, other bytes
      if (change === 'forbid tool') {
        const reloads = audit(rig).filter((r) => r.kind === 'reload').length;
        writeFileSync(join(rig.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["tool"], decision="forbidden")\n');
        await waitFor(() => audit(rig).filter((r) => r.kind === 'reload').length > reloads || undefined, 'the rules to reload');
      }
      const r = await gateSh(rig, `${WARM}; for t in tool; do ./$t -f victim; done; echo status=$?`, { timeoutMs: 60_000 });
      if (change === 'no change') {
        assert.match(r.stdout, /^status=0$/m, `${r.stdout}${r.stderr}`);
        assert.deepEqual(execsOf(rig, tool).at(-1), [['-f', 'victim'], true]);
      } else {
        assert.match(r.stdout, /^status=126$/m, `${r.stdout}${r.stderr}`);
        assert.deepEqual(execsOf(rig, tool).at(-1), [['-f', 'victim'], false]);
        assert.ok(existsSync(join(rig.ws, 'victim')), 'victim was removed');
      }
    }
  });

  test(`${mode}: a preset holds for the very file decided on: rewritten after the hand-over, it is decided again (rm forbidden, then allowed)`, async (t) => {
    for (const decision of ['forbidden', 'allow'] as const) {
      const rig = await startDaemon(execGateOptions({ rules: [`prefix_rule(pattern=["rm"], decision="${decision}")`], env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      const tool = join(rig.ws, 'tool');
      writeFileSync(join(rig.ws, 'victim'), 'x');
      const first = await gateSh(rig, FIRST, { timeoutMs: 60_000 });
      assert.match(first.stdout, /^first=0$/m, first.stderr);
      // handed over with a and b, then rewritten in place into a copy of rm (same inode, other bytes)
      const r = await gateSh(rig, `${WARM}; cat /bin/rm > ./tool; ./tool -f victim; echo status=$?`, { timeoutMs: 60_000 });
      assert.deepEqual(execsOf(rig, tool).at(-1), [['-f', 'victim'], false]);
      if (decision === 'forbidden') {
        assert.match(r.stdout, /^status=126$/m, `${r.stdout}${r.stderr}`);
        assert.ok(existsSync(join(rig.ws, 'victim')), 'victim was removed');
      } else {
        assert.match(r.stdout, /^status=0$/m, `${r.stdout}${r.stderr}`);
        assert.equal(existsSync(join(rig.ws, 'victim')), false, 'rm did not run');
      }
    }
  });

  test(`${mode}: a program the script names comes with its plan, its first exec answered by the supervisor; not once a rule names it, nor after the script rewrites it (a copy of rm is judged as rm)`, async (t) => {
    for (const change of ['no change', 'forbid tool', 'tool becomes rm, rm forbidden', 'tool becomes rm, rm allowed'] as const) {
      const rm = change === 'tool becomes rm, rm allowed' ? 'allow' : 'forbidden';
      const rules = [`prefix_rule(pattern=["rm"], decision="${rm}")`];
      const rig = await startDaemon(execGateOptions({ rules, env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      const tool = join(rig.ws, 'tool');
      const victim = join(rig.ws, 'victim');
      writeFileSync(victim, 'x');
      const first = await gateSh(rig, 'cp /bin/true ./tool; ./tool first; echo first=$?', { timeoutMs: 60_000 });
      assert.match(first.stdout, /^first=0$/m, first.stderr);
      assert.deepEqual(execsOf(rig, tool), [[['first'], false]]);
      if (change === 'forbid tool') {
        const reloads = audit(rig).filter((r) => r.kind === 'reload').length;
        writeFileSync(join(rig.env.GATE_HOME, 'rules', 'default.rules'), `${rules[0]}\nprefix_rule(pattern=["./tool"], decision="forbidden")\n`);
        await waitFor(() => audit(rig).filter((r) => r.kind === 'reload').length > reloads || undefined, 'the rules to reload');
      }
      // (rewritten in place: the same inode, other bytes, after the plan was made)
      const rewrite = change.startsWith('tool becomes rm') ? 'cat /bin/rm > ./tool; ' : '';
      const r = await gateSh(rig, `${rewrite}./tool -f victim; echo status=$?`, { timeoutMs: 60_000 });
      if (change === 'no change') {
        assert.match(r.stdout, /^status=0$/m, `${r.stdout}${r.stderr}`);
        // the run's first any-argv answer: no other hand-over could have brought it
        assert.deepEqual(execsOf(rig, tool).at(-1), [['-f', 'victim'], true]);
      } else if (change === 'forbid tool') {
        // decided by pre-flight: nothing of the script ran
        assert.equal(r.code, 126, `${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /forbidden|denied/);
        assert.deepEqual(execsOf(rig, tool), [[['first'], false]]);
      } else {
        assert.deepEqual(execsOf(rig, tool).at(-1), [['-f', 'victim'], false]);
        assert.match(r.stdout, rm === 'allow' ? /^status=0$/m : /^status=126$/m, `${r.stdout}${r.stderr}`);
        assert.equal(existsSync(victim), rm !== 'allow', rm === 'allow' ? 'rm did not run' : 'victim was removed');
      }
    }
  });

  test(`${mode}: what a login shell's start-up ran comes with the next call's plan (\`id -u\` of /etc/profile asks nothing); a forbidden rule on it denies it there all the same`, async (t) => {
    if (!/\bid -u\b/.test(existsSync('/etc/profile') ? readFileSync('/etc/profile', 'utf8') : '')) return t.skip('this /etc/profile runs no `id -u`');
    for (const rule of ['none', 'forbidden'] as const) {
      const rules = rule === 'forbidden' ? ['prefix_rule(pattern=["id"], decision="forbidden")'] : [];
      const rig = await startDaemon(execGateOptions({ rules, env: { GATE_SANDBOX_MODE: mode } }));
      t.after(async () => (killAll(), rig.close()));
      for (let i = 0; i < 2; i++) {
        const r = await run(GATE_SH, ['-lc', 'echo ran'], { env: rig.env, cwd: rig.ws, timeoutMs: 60_000 });
        assert.match(r.stdout, /^ran$/m, r.stderr);
      }
      const ids = audit(rig).filter((r) => r.kind === 'exec' && r.argv?.[0]?.endsWith('/id') && r.argv[1] === '-u');
      assert.equal(ids.length, 2, JSON.stringify(ids));
      if (rule === 'none') assert.deepEqual(ids.map((r) => r.reused === true), [false, true], JSON.stringify(ids));
      else assert.ok(ids.every((r) => r.reused !== true && /Deny|forbidden/.test(JSON.stringify(r))), JSON.stringify(ids));
    }
  });
}
