// A run without a sandbox cannot write the gate's home (the guard binds it read-only), but rename(2) refuses
// only the mount point itself: the run can move the folder above GATE_HOME aside and make a new GATE_HOME in
// its place, with empty rules. Before src/daemon/home-places.ts the daemon reloaded those as the user's, and
// the next `rm` the user had forbidden ran. Now the reload fails and every run is refused with the reason
// until the daemon starts again. Real daemon (danger-full-access, `rm` forbidden), real gate-sh and exec gate.
// Test-only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

test('danger-full-access: a run that moves the folder above GATE_HOME and plants another home gets every later run refused, not its rules loaded', async (t) => {
  const rig = await startDaemon({
    rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'],
    config: 'sandbox_mode = "danger-full-access"\napproval_policy = "on-request"\n',
    env: { GATE_NO_AUTOSTART: '1' },
  });
  const home = rig.env.GATE_HOME;
  const parent = dirname(home);
  // (a folder of its own outside the home's parent: the workspace moves with it)
  const outside = mkdtempSync(join(tmpdir(), 'g-moved-'));
  t.after(async () => {
    killAll();
    // put the rig back where it was, so that its own clean-up finds it
    if (existsSync(`${parent}.moved`)) {
      rmSync(parent, { recursive: true, force: true });
      renameSync(`${parent}.moved`, parent);
    }
    await rig.close();
    rmSync(outside, { recursive: true, force: true });
  });
  const victim = join(outside, 'victim');
  writeFileSync(victim, 'x');
  const gsh = (script: string) => run(GATE_SH, ['-c', script], { env: rig.env, cwd: outside, timeoutMs: 60_000 });

  const before = await gsh(`rm -f ${victim}; echo rc=$?`);
  assert.equal(before.code, 126, before.stderr);
  assert.ok(existsSync(victim), 'rm ran while forbidden');

  // the attack: the home's parent moved aside, a new home with empty rules in its place
  const attack = await gsh(`mv "${parent}" "${parent}.moved" && mkdir -p "${home}/rules" && : > "${home}/rules/default.rules"; echo moved=$?`);
  assert.match(attack.stdout, /^moved=0$/m, attack.stderr);

  // the reload it causes fails: every run is refused, with the reason
  const after = await waitFor(async () => {
    const r = await gsh('echo ran');
    return r.code === 126 ? r : undefined;
  }, 'runs to be refused once the daemon sees the planted home');
  assert.match(after.stderr, /not the one the daemon started with \(moved or replaced while it ran\)/);
  assert.doesNotMatch(after.stdout, /ran/);
  const rm = await gsh(`rm -f ${victim}; echo rc=$?`);
  assert.equal(rm.code, 126, rm.stderr);
  assert.ok(existsSync(victim), 'the planted rules were loaded: the forbidden rm ran');
});
