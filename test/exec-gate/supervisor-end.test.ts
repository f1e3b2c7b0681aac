/**
 * The supervisor ends with its tree, however early the tree root ends. A root that ends right after handing
 * over its exec filter (its guard refused under another sandbox's Landlock domain) used to leave gate-sh
 * waiting for ever: the supervisor set SIGCHLD's disposition after that, which discards a pending SIGCHLD,
 * and then waited for one. Real daemon, real launcher, real Landlock (the test's python helper); each run
 * is given a minute before it is called hung and its process group killed. Busy loops on every core
 * while the runs start make the window (the root ending before the supervisor is scheduled again) likely:
 * without them the old code hung about one run in twenty on a loaded machine, rarely on a quiet one.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { killAll, startDaemon } from '../helpers/daemon.js';
import { LANDLOCK } from '../daemon/helpers.js';

after(killAll);

interface Ended {
  code: number | null;
  stderr: string;
  hung: boolean;
}

/** argv run in a process group of its own; after `ms` the group is killed and the run called hung. */
function runOrHang(argv: string[], env: Record<string, string>, cwd: string, ms: number): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { env, cwd, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    const err: Buffer[] = [];
    c.stderr.on('data', (d: Buffer) => err.push(d));
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }, ms);
    c.on('error', reject);
    c.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: Buffer.concat(err).toString(), hung });
    });
  });
}

test('a tree root that ends at once (its guard refused under Landlock) is reaped: gate-sh says why and exits 126, 8 runs at once, 3 rounds; outside Landlock the same command runs', async () => {
  const d = await startDaemon({ te: tempEnv({}, { runtimeInside: true }), env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
  try {
    const work = join(d.te.dir, 'w');
    mkdirSync(work);
    const marker = join(d.te.dir, 'ran');
    const script = `touch ${marker}; echo ran`;
    const landlocked = [LANDLOCK[0], LANDLOCK[1], `${work}:/dev:${d.te.env.XDG_RUNTIME_DIR}:${d.te.dir}`, GATE_SH, '-c', script];
    const burners = Array.from({ length: availableParallelism() * 2 }, () =>
      spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }),
    );
    try {
      for (let round = 0; round < 3; round++) {
        const ends = await Promise.all(Array.from({ length: 8 }, () => runOrHang(landlocked, d.te.env, work, 60_000)));
        for (const e of ends) {
          assert.equal(e.hung, false, `round ${round}: gate-sh still waiting after a minute: ${e.stderr}`);
          assert.equal(e.code, 126, e.stderr);
          assert.match(e.stderr, /the gate's guard: another sandbox \(Landlock\?\) forbids the mounts/);
        }
      }
    } finally {
      for (const b of burners) b.kill('SIGKILL');
    }
    const outside = await runOrHang([GATE_SH, '-c', script], d.te.env, work, 60_000);
    assert.equal(outside.code, 0, outside.stderr);
    assert.equal(outside.hung, false);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});
