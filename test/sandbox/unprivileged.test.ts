/**
 * The host sockets' masks for a user other than root (docs/sandbox.md, "Unix sockets of the host"): bubblewrap
 * then makes user namespaces of its own, and the supervisor's helper must enter the one that owns the
 * sandbox's mount namespace before it can mount the masks there (shims/launch/masks.c). The suite runs as
 * root, where that path never ran (and every non-root run was refused). Here the daemon and gate-sh run as
 * uid/gid 65534 (setpriv), with a HOME, runtime folder and workspace of that user's own in a temp folder: a
 * Unix socket server the test starts outside is reached by that user outside any sandbox, not from inside a
 * gated run, and the run still works (it writes and reads its workspace), also after a command left a job
 * (no session sandbox for such a user: the daemon says why). Skipped only when the kernel refuses that user
 * a user namespace.
 * Real daemon, real bubblewrap, real gate-sh.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { GATE, GATE_SH, tempEnv } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

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

interface Rig {
  d: DaemonProc;
  ws: string;
  sock: string;
  served(): number;
  asUser(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** The daemon as that user, its folders that user's, and the test's own socket server outside them. */
async function rig(): Promise<Rig> {
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
  let d: DaemonProc;
  try {
    d = await startDaemon({ te, wrap: AS_USER });
  } catch (e) {
    server.close();
    te.cleanup();
    throw e;
  }
  const asUser = (argv: string[]) => run(AS_USER[0], [...AS_USER.slice(1), ...argv], { env: te.env, cwd: ws });
  return {
    d,
    ws,
    sock,
    served: () => served,
    asUser,
    close: async () => {
      server.close();
      await asUser([process.execPath, GATE, 'jobs', 'kill', 'all']);
      await d.close();
    },
  };
}

test('as an unprivileged user: a host socket is out of reach from a sandboxed run, and the run works', { skip: cannot(), timeout: 120_000 }, async () => {
  const r = await rig();
  try {
    // that user reaches it outside any sandbox (so a refusal inside is the sandbox's)
    const out = await r.asUser([process.execPath, join(r.ws, 'probe.js'), r.sock]);
    assert.equal(out.stdout.trim(), 'reached', out.stdout + out.stderr);
    const before = r.served();
    const g = await r.asUser([GATE_SH, '-c', `id -u; stat -c %F ${r.sock}; node probe.js ${r.sock}; echo made > made.txt && cat made.txt`]);
    assert.equal(g.code, 0, g.stdout + g.stderr + r.d.output());
    const [uid, kind, probe, made] = g.stdout.trim().split('\n');
    assert.equal(uid, String(UID), g.stdout);
    // the null device's mount over it (the supervisor's mask, mounted through bubblewrap's user namespace)
    assert.equal(kind, 'character special file', g.stdout + g.stderr);
    assert.equal(probe, 'ECONNREFUSED', g.stdout + g.stderr);
    assert.equal(made, 'made', g.stdout + g.stderr);
    assert.equal(r.served(), before, 'the server got no connection from inside');
    assert.equal(spawnSync('cat', [join(r.ws, 'made.txt')], { encoding: 'utf8' }).stdout, 'made\n');
  } finally {
    await r.close();
  }
});

test('as an unprivileged user: after a command leaves a job, the next command is masked too', { skip: cannot(), timeout: 120_000 }, async () => {
  const r = await rig();
  try {
    // a background job outlives its command. As root the session sandbox is held for the next command to
    // join; as another user the daemon cannot make one (its holder needs pid and network namespaces of the
    // host's user namespace) and says so: each run then gets a sandbox of its own, masked as any
    const first = await r.asUser([GATE_SH, '-c', 'sleep 5 >/dev/null 2>&1 & echo started']);
    assert.equal(first.stdout, 'started\n', first.stderr + r.d.output());
    const st = await r.asUser([process.execPath, GATE, 'status', '--json']);
    const sessions = JSON.parse(st.stdout).session_sandboxes as { unavailable?: string; sandboxes: unknown[] };
    assert.match(sessions.unavailable ?? 'none', /cannot make the pid and network namespaces/, st.stdout);
    const before = r.served();
    const g = await r.asUser([GATE_SH, '-c', `stat -c %F ${r.sock}; node probe.js ${r.sock}; echo again > made.txt && cat made.txt`]);
    assert.equal(g.code, 0, g.stdout + g.stderr + r.d.output());
    assert.equal(g.stdout, 'character special file\nECONNREFUSED\nagain\n', g.stderr);
    assert.equal(r.served(), before, 'the server got no connection from inside');
  } finally {
    await r.close();
  }
});
