/**
 * The host sockets' masks for a user other than root (docs/sandbox.md, "Unix sockets of the host"): bubblewrap
 * then makes a user namespace of its own, and the supervisor's helper must enter it before it can mount the
 * masks in the sandbox's mount namespace (shims/launch/masks.c). The suite runs as root, where that path
 * never ran. Here the daemon and gate-sh run as uid/gid 65534 (setpriv), with a HOME, runtime folder and
 * workspace of that user's own in a temp folder: a Unix socket server the test starts outside is reached
 * by that user outside any sandbox, not from inside a gated run, and the run still works (it writes and reads
 * its workspace). Skipped only when the kernel refuses that user a user namespace. Real daemon, real
 * bubblewrap, real gate-sh.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';

const UID = 65534;
const AS_USER = ['setpriv', `--reuid=${UID}`, `--regid=${UID}`, '--clear-groups'];

/** Why the test cannot run here, or undefined. */
function cannot(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root to run commands as another user (setpriv)';
  const r = spawnSync(AS_USER[0], [...AS_USER.slice(1), 'unshare', '--user', 'true'], { encoding: 'utf8' });
  if (r.error) return `setpriv/unshare cannot run: ${r.error.message}`;
  if (r.status !== 0) return `the kernel refuses an unprivileged user a user namespace: ${r.stderr.trim()}`;
  return undefined;
}

function chownTree(p: string): void {
  chownSync(p, UID, UID);
  if (!statSync(p).isDirectory()) return;
  for (const n of readdirSync(p)) chownTree(join(p, n));
}

const PROBE = `// connects to the path given: "reached" when something serves there, else the error
const c = require('node:net').connect(process.argv[2]);
c.on('connect', () => (console.log('reached'), c.destroy()));
c.on('error', (e) => console.log(e.code));
`;

test('as an unprivileged user: a host socket is out of reach from a sandboxed run, and the run works', { skip: cannot(), timeout: 120_000 }, async () => {
  const te = tempEnv({}, { runtimeInside: true });
  Object.assign(te.env, { TMPDIR: join(te.dir, 't'), GATE_NO_AUTOSTART: '1', GATE_APPROVAL_POLICY: 'on-request', GATE_SANDBOX_MODE: 'workspace-write' });
  const ws = join(te.dir, 'w');
  const outside = join(te.dir, 'outside');
  for (const d of [ws, outside, te.env.TMPDIR]) mkdirSync(d, { recursive: true });
  writeFileSync(join(ws, 'probe.js'), PROBE);
  chownTree(te.dir);
  // the test's own server, outside the run's folders, open to that user
  const sock = join(outside, 'srv.sock');
  let served = 0;
  const server: Server = createServer((c) => (served++, c.destroy()));
  await new Promise<void>((r) => server.listen(sock, r));
  chmodSync(sock, 0o777);
  const d = await startDaemon({ te, wrap: AS_USER });
  try {
    const asUser = (argv: string[]) => run(AS_USER[0], [...AS_USER.slice(1), ...argv], { env: te.env, cwd: ws });
    // that user reaches it outside any sandbox (so a refusal inside is the sandbox's)
    const out = await asUser([process.execPath, join(ws, 'probe.js'), sock]);
    assert.equal(out.stdout.trim(), 'reached', out.stdout + out.stderr);
    const before = served;
    const r = await asUser([GATE_SH, '-c', `id -u; stat -c %F ${sock}; node probe.js ${sock}; echo made > made.txt && cat made.txt`]);
    assert.equal(r.code, 0, r.stdout + r.stderr + d.output());
    const [uid, kind, probe, made] = r.stdout.trim().split('\n');
    assert.equal(uid, String(UID), r.stdout);
    // the null device's mount over it (the supervisor's mask, mounted through bubblewrap's user namespace)
    assert.equal(kind, 'character special file', r.stdout + r.stderr);
    assert.equal(probe, 'ECONNREFUSED', r.stdout + r.stderr);
    assert.equal(made, 'made', r.stdout + r.stderr);
    assert.equal(served, before, 'the server got no connection from inside');
    assert.equal(spawnSync('cat', [join(ws, 'made.txt')], { encoding: 'utf8' }).stdout, 'made\n');
  } finally {
    server.close();
    await d.close();
  }
});
