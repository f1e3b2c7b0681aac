/**
 * Signals as under bash (issue 29: real work runs as under bash), under the default policy in workspace-write
 * and danger-full-access: the run starts with the caller's signal dispositions (a signal the caller ignored
 * stays ignored, as `nohup` and a background job's SIGINT need; the terminal's job-control stops are not
 * ignored), and a run that a signal ended ends gate-sh by that signal, not with 128+n. Before: every run had
 * SIGTSTP, SIGTTIN and SIGTTOU ignored (the supervisor's own setting), the caller's ignored SIGHUP, SIGINT
 * and SIGPIPE were reset to the default, and `kill -TERM $$` gave exit status 143 where bash dies by SIGTERM.
 * Real daemon, gate-sh, bash, bubblewrap and exec gate. Test-only.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { MODES, realworkDaemon } from './helpers.js';

after(killAll);

/** The dispositions of the run's shell and of a program it starts, as /proc shows them. */
const PROBE = 'grep -E "^Sig(Ign|Blk)" /proc/self/status; sh -c "grep ^SigIgn /proc/\\$\\$/status"';

for (const mode of MODES)
  describe(`signals, ${mode}`, { timeout: 120_000 }, () => {
    test('the caller\'s dispositions, its ignored signals kept; a run killed by a signal ends gate-sh by it', async (t) => {
      const d = await realworkDaemon(mode);
      t.after(() => d.close());
      const o = { env: d.env, cwd: d.ws, timeoutMs: 60_000 };
      for (const ignored of ['', "trap '' HUP INT PIPE;"]) {
        // the caller (a shell that ignores some signals) starts bash, or gate-sh, in its place
        const [bash, gate] = await Promise.all(['bash', GATE_SH].map((sh) => run('bash', ['-c', `${ignored} exec "$0" -lc '${PROBE}'`, sh], o)));
        assert.equal(gate.code, 0, gate.stderr);
        assert.equal(gate.stdout, bash.stdout, `${ignored || 'nothing ignored'}: the same dispositions`);
      }
      for (const script of ['echo before; kill -TERM $$; echo after', 'python3 -c "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"']) {
        const bash = await run('bash', ['-lc', script], o);
        const gate = await run(GATE_SH, ['-lc', script], o);
        assert.equal(bash.signal !== null, true, `${script}: bash ended by a signal`);
        assert.deepEqual([gate.code, gate.signal, gate.stdout], [bash.code, bash.signal, bash.stdout], `${script}: ${gate.stderr}`);
      }
    });
  });
