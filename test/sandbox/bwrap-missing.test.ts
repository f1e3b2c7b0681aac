// bubblewrap missing on a machine whose session policy needs a sandbox: gate-sh says which package to
// install and runs nothing (never an unsandboxed run by accident). The missing bwrap is made real with a
// private mount namespace where /usr/bin/bwrap is covered by /dev/null (not executable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { runGate } from '../daemon/helpers.js';
import { TRUSTED_BWRAP_DIRS } from '../../src/exec/sandbox-run.js';
import { daemonForTest } from '../helpers/daemon.js';

test('bubblewrap missing: gate-sh names the package, exits 126, nothing ran; danger-full-access still runs', async (t) => {
  const { te, ws } = await daemonForTest(t, { config: 'sandbox_mode = "workspace-write"\n', workspace: 'ws', env: { GATE_NO_AUTOSTART: '1' } });
  // cover every bwrap gate-sh would trust, in a namespace of gate-sh's own
  const hide = TRUSTED_BWRAP_DIRS.map((dir) => join(dir, 'bwrap')).filter((p) => existsSync(p));
  assert.ok(hide.length > 0, 'bubblewrap is installed on this machine (.ci/run installs it)');
  const inNs = (script: string, env: Record<string, string>) =>
    spawnSync(
      'unshare',
      [
        ...(process.getuid?.() === 0 ? [] : ['--map-root-user']),
        '--mount',
        'sh',
        '-c',
        `${hide.map((p) => `mount --bind /dev/null ${p}`).join(' && ')} && exec "$@"`,
        'sh',
        GATE_SH,
        '-c',
        script,
      ],
      { env, cwd: ws, encoding: 'utf8', timeout: 30_000 },
    );

  const r = inNs('echo ran > made', te.env);
  assert.equal(r.status, 126, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^gate-sh: .*bubblewrap \(bwrap\) is not installed: apt-get install -y bubblewrap/m);
  assert.ok(!existsSync(join(ws, 'made')), 'nothing ran');

  // a session without a sandbox needs no bubblewrap (the daemon's policy decides, not the caller's env)
  const set = await runGate(te.env, ['config', 'set', 'sandbox_mode', 'danger-full-access']);
  assert.equal(set.code, 0, set.stderr);
  const full = inNs('echo ran > made', te.env);
  assert.equal(full.status, 0, full.stderr);
  assert.ok(existsSync(join(ws, 'made')));
});
