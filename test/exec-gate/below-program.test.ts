/**
 * Below a program running its own files (docs/exec-gate.md, "Below a program running its own files"): the
 * supervisor marks a new program whose forked children's execs can never leave the sandbox by a rule (make,
 * `./configure`, a compiler, anything below one), and its LD_PRELOAD layer leaves itself out of them; the
 * kernel layer still decides each of their execs. The model's own commands (the run's bash, `bash -c`,
 * `python -c`) keep the layer. And an exec of a program that is not there is failed with ENOENT by the
 * supervisor, without the daemon (a program without the layer, static or below a program, tries each PATH entry). Real daemon,
 * real gate-sh, real sandbox; each denial beside the same command running without the rule.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approvalCall } from '../../src/client/approval-client.js';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { realworkDaemon } from '../realwork/helpers.js';

after(killAll);

const RM_FORBIDDEN = 'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")';
/** how many of the process's mappings are the gate's library, and whether LD_PRELOAD names it */
const PROBE = 'echo "$(grep -c libgate /proc/self/maps) [$LD_PRELOAD]"';
/** make runs the recipe's shell, which runs a shell of its own (a grandchild); then removes a file by rm */
const inMake = PROBE.replaceAll('$', () => '$$');
const MAKEFILE = `all:\n\t@${inMake}; sh -c '${inMake}'\n\t@rm -f y\n`;

const gsh = (d: DaemonProc, script: string) => run(GATE_SH, ['-lc', script], { env: d.env, cwd: d.ws, timeoutMs: 60_000 });

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: make's recipes run without the LD_PRELOAD layer and a forbidden rm still holds there; the model's own commands keep it`, { timeout: 120_000 }, async (t) => {
    for (const rules of [[], [RM_FORBIDDEN]]) {
      const d = await realworkDaemon(mode, rules);
      t.after(() => d.close());
      writeFileSync(join(d.ws, 'Makefile'), MAKEFILE);
      writeFileSync(join(d.ws, 'y'), '');
      const r = await gsh(d, 'make; echo make=$?');
      // the recipe's shell and its own shell: no layer, nothing preloaded
      assert.match(r.stdout, /^0 \[\]\n0 \[\]\n/, r.stderr);
      if (rules.length) {
        // the kernel layer decides the recipe's rm and says so itself
        assert.match(r.stderr, /gate-sh: denied: rm -f y: Execution forbidden by policy/);
        assert.match(r.stdout, /^make=2$/m);
        assert.ok(existsSync(join(d.ws, 'y')));
      } else {
        assert.match(r.stdout, /^make=0$/m, r.stderr);
        assert.equal(existsSync(join(d.ws, 'y')), false);
      }
      // the model's own text, however it is handed over: the layer is there
      const own = await gsh(d, `${PROBE}; bash -c '${PROBE}'; python3 -c 'import os; os.system(""" ${PROBE} """)'`);
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, /^([1-9]\d* \[\S*libgate\.so\S*\]\n){3}$/, own.stdout);
    }
  });
}

test('a program that is not there fails with ENOENT at the supervisor, without a round trip to the daemon', { timeout: 120_000 }, async (t) => {
  const d = await realworkDaemon('workspace-write');
  t.after(() => d.close());
  // a static program (no LD_PRELOAD layer) whose execvp tries each PATH entry with execve, as gcc's does
  const prog = join(d.ws, 'vfork-execvp');
  execFileSync('gcc', ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', prog, join(ROOT, 'test', 'exec-gate', 'programs', 'vfork-execvp.c')]);
  const trips = async () => {
    const c = ((await approvalCall(d.paths, 'status')).status as { counters: Record<string, number> }).counters;
    return (c.exec ?? 0) + (c.preflight ?? 0) + (c.paired ?? 0);
  };
  const tripsOf = async (path: string) => {
    const at = await trips();
    // (PATH given to gate-sh: a script that sets it is asked about, a login shell's profile resets it)
    const r = await run(GATE_SH, ['-c', './vfork-execvp 5 true'], { env: { ...d.env, PATH: path }, cwd: d.ws, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ok=5 of 5$/m);
    return (await trips()) - at;
  };
  await tripsOf('/usr/bin:/bin');
  const found = await tripsOf('/usr/bin:/bin');
  // three missing folders first: 15 execs that fail, and as many round trips as without them
  assert.equal(await tripsOf('/nx1:/nx2:/nx3:/usr/bin:/bin'), found);
});
