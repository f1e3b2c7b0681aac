/**
 * gate-sh started inside a gated run is the nested shell it stands for (issue 31 point 4): found as `bash`
 * through PATH (gemini's alias puts ~/.gate-sh/bin first), through a symlink named bash, through
 * `#!/usr/bin/env bash`, or called by name. Before the fix each of these failed with "the session sandbox
 * is gone (its namespaces cannot be joined)", exit 126. A forbidden command inside such a nested shell
 * stays denied (and runs without that rule), and a GATE_RUN set outside any gated run gives no way
 * round the gate. Real daemon, real bubblewrap, real bash.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { daemonForTest } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { gateSh } from './helpers.js';

const FORBID_RM = 'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")\n';
/** no rule on rm: a plain `rm file` runs in place, in the run's sandbox */
const NO_RM_RULE = '';

/** A daemon in `mode`, a workspace with a bin/bash that is gate-sh and a `#!/usr/bin/env bash` script. */
async function rig(t: TestContext, mode: string, rules: string) {
  const d = await daemonForTest(t, { rules, workspace: 'ws', args: ['--sandbox', mode] });
  const bin = join(d.te.dir, 'bin');
  mkdirSync(bin);
  symlinkSync(GATE_SH, join(bin, 'bash'));
  writeFileSync(join(d.ws, 'tool'), '#!/usr/bin/env bash\necho "tool ran $1"\n', { mode: 0o755 });
  writeFileSync(join(d.ws, 'victim'), 'x\n');
  return { d, bin };
}

for (const mode of ['workspace-write', 'danger-full-access']) {
  test(`${mode}: gate-sh found as bash inside a gated run is the nested shell (PATH, #!/usr/bin/env bash, by name)`, async (t) => {
    const { d, bin } = await rig(t, mode, FORBID_RM);
    const script = [
      `export PATH=${bin}:/usr/bin:/bin`,
      './tool one',
      'bash -c "echo via-path-bash"',
      `${join(bin, 'bash')} -lc "echo via-symlink"`,
      `${GATE_SH} -c "echo by-name"`,
    ].join('\n');
    const r = await gateSh(['-lc', script], { env: d.env, cwd: d.ws });
    assert.equal(r.stderr.toString(), '', 'no gate-sh error');
    assert.equal(r.stdout.toString(), 'tool ran one\nvia-path-bash\nvia-symlink\nby-name\n');
    assert.equal(r.code, 0);
  });

  test(`${mode}: a forbidden rm in a #!/usr/bin/env bash script run by such a nested shell is denied, and runs without that rule`, async (t) => {
    for (const [rules, denied] of [
      [FORBID_RM, true],
      [NO_RM_RULE, false],
    ] as const) {
      const { d, bin } = await rig(t, mode, rules);
      writeFileSync(join(d.ws, 'clean'), '#!/usr/bin/env bash\nrm victim\necho after=$?\n', { mode: 0o755 });
      const r = await gateSh(['-lc', `export PATH=${bin}:/usr/bin:/bin\n./clean`], { env: d.env, cwd: d.ws });
      if (denied) {
        assert.match(r.stderr.toString(), /gate-sh: denied: rm victim: .*use trash instead/);
        assert.equal(r.stdout.toString(), 'after=126\n');
        assert.ok(existsSync(join(d.ws, 'victim')), 'the victim is still there');
      } else {
        assert.equal(r.stdout.toString(), 'after=0\n', r.stderr.toString());
        assert.ok(!existsSync(join(d.ws, 'victim')), 'rm ran');
      }
      await d.close();
    }
  });
}

test('GATE_RUN set outside any gated run is not the kernel word: gate-sh gates the script as usual', async (t) => {
  const { d } = await rig(t, 'workspace-write', FORBID_RM);
  const r = await gateSh(['-c', 'rm victim'], { env: { ...d.env, GATE_RUN: 'r-forged' }, cwd: d.ws });
  assert.equal(r.code, 126);
  assert.ok(existsSync(join(d.ws, 'victim')), 'nothing ran');
});
