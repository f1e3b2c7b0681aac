/**
 * A host socket gone between the plan and bubblewrap's mounts (src/sandbox/sockets.ts, shims/gate-masks.h):
 * every host socket a sandbox could reach is masked one by one (`--ro-bind-try /dev/null <socket>`), and
 * sockets come and go on the host (another daemon stopping, a tool's socket removed) while a plan travels
 * from the daemon to the launcher; bubblewrap then had no mount point and the run failed ("Can't create
 * file", "Can't mkdir parents"). The launcher takes the masks out of bubblewrap's options and its supervisor
 * mounts those of sockets still there in the built sandbox (shims/launch/masks.c), and only those: a mask
 * over a socket still there still refuses connect(), and any other /dev/null bind over a missing path (a
 * protected missing file) is still bubblewrap's and still fails the run as before.
 * Real daemon, real gate-launch (the kernel layer), real bubblewrap.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { withExecGate } from '../../src/exec/exec-gate.js';
import { findBwrap } from '../../src/exec/sandbox-run.js';
import { type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';
import { execGateOptions } from '../exec-gate/helpers.js';

let rig: DaemonProc;
before(async () => {
  rig = await startDaemon(execGateOptions({ rules: [] }));
});
after(async () => {
  killAll();
  await rig.close();
});

const PROBE = 'import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print("connected")\nexcept OSError as e: print(e.strerror)\n';

/** bubblewrap around `command` with a read-only host (nothing can be created for a missing mount point) and `masks`. */
function sandboxed(masks: string[], command: string[]) {
  const bwrap = findBwrap(rig.env);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', ...masks, '--', ...command];
  const plan = withExecGate({ program: bwrap, args, env: { ...rig.env } }, { paths: rig.paths, runId: `r-masks-${process.pid}`, parentPid: process.pid });
  return run(plan.program, plan.args, { env: plan.env, cwd: rig.ws, timeoutMs: 30_000 });
}

test('a socket gone before bubblewrap runs: its mask is left out and the run goes on; a mask over a live socket still refuses connect()', async () => {
  const gone = join(rig.te.dir, 'gone', 'daemon.sock'); // neither the socket nor its folder is there any more
  const r = await sandboxed(['--ro-bind-try', '/dev/null', gone], ['/bin/echo', 'ran']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'ran\n');
  assert.equal(r.stderr, '');

  const live = join(rig.te.dir, 'live');
  mkdirSync(live);
  const sock = join(live, 'server.sock');
  const server: Server = createServer((c) => {
    c.on('error', () => {});
    c.end();
  });
  await new Promise<void>((res) => server.listen(sock, res));
  try {
    const open = await sandboxed([], ['/usr/bin/python3', '-c', PROBE, sock]);
    assert.equal(open.stdout, 'connected\n', `without a mask the probe reaches the server: ${open.stderr}`);
    const masked = await sandboxed(['--ro-bind-try', '/dev/null', sock, '--ro-bind-try', '/dev/null', gone], ['/usr/bin/python3', '-c', PROBE, sock]);
    assert.equal(masked.code, 0, masked.stderr);
    assert.equal(masked.stdout, 'Connection refused\n', masked.stderr);
  } finally {
    server.close();
  }
});

test('any other /dev/null bind over a missing path is still made: the run fails as before (a protected missing file stays uncreatable)', async () => {
  const missing = join(rig.te.dir, 'gone', 'default.rules');
  const r = await sandboxed(['--ro-bind', '/dev/null', missing], ['/bin/echo', 'ran']);
  assert.notEqual(r.code, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /bwrap: Can't (create file|mkdir parents)/);
});

test('a socket that is there but cannot be masked: nothing runs (fail closed), and the run says why', async () => {
  const dir = join(rig.te.dir, 'unmaskable');
  mkdirSync(dir);
  const sock = join(dir, 'server.sock');
  const server: Server = createServer((c) => {
    c.on('error', () => {});
    c.end();
  });
  await new Promise<void>((res) => server.listen(sock, res));
  try {
    // the sandbox's /dev/null is a plain file: the supervisor has no null device to mask with
    const plain = join(dir, 'plain');
    writeFileSync(plain, '');
    const open = await sandboxed(['--ro-bind', plain, '/dev/null'], ['/bin/echo', 'ran']);
    assert.equal(open.stdout, 'ran\n', `without a mask to make the command runs: ${open.stderr}`);
    const r = await sandboxed(['--ro-bind', plain, '/dev/null', '--ro-bind-try', '/dev/null', sock], ['/bin/echo', 'ran']);
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /exec gate: \/bin\/echo: not run: the host's sockets cannot be hidden from the sandbox: no null device in it/);
  } finally {
    server.close();
  }
});
