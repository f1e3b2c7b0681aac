/**
 * Issue 28, finding 7 ("req/c unlinks by a background job") and What to build 2 ("per-run client folders, so
 * no run can touch another's replies"), end to end: a real daemon, real gate-sh, bubblewrap and the exec
 * gate. Run A leaves a background job that unlinks everything it can find in the clients' folder (and in
 * every folder in it), over and over, while run B runs 50 execs: B is unaffected, and A's job never sees B's
 * folder. Before, every sandboxed run of a session bound its reply sockets in one shared writable `req/c`:
 * the job unlinked B's supervisor sockets and B's execs failed ("the exec supervisor of this run is gone")
 * or its requests went unanswered. In workspace-write (a session sandbox, and a sandbox of its own),
 * read-only and danger-full-access (no sandbox: the gate's guard keeps the other folders out of sight; they
 * were visible, read-only). And a request naming another run, sent from a run's own folder or over
 * stream.sock, is refused.
 * Test-only; everything lives in the test's temp folders.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GATE_SH } from '../helpers/env.js';
import { execGateOptions, gateSh } from '../exec-gate/helpers.js';
import { type DaemonProc, killAll, startDaemon, track, waitFor } from '../helpers/daemon.js';

/** python3 unlinker.py STOP: every entry under the clients' folder (the parent of GATE_CLIENT_DIR) unlinked,
 * every folder removed, again and again until STOP exists; prints the folders it saw and what it removed. */
const UNLINKER = `import os, sys, time
stop = sys.argv[1]
base = os.path.dirname(os.environ["GATE_CLIENT_DIR"])
seen, removed = set(), 0
print("ready", flush=True)
while not os.path.exists(stop):
    for root, dirs, files in os.walk(base, topdown=False):
        for d in dirs:
            seen.add(d)
        for f in files:
            try:
                os.unlink(os.path.join(root, f))
                removed += 1
            except OSError:
                pass
        for d in dirs:
            try:
                os.rmdir(os.path.join(root, d))
            except OSError:
                pass
    time.sleep(0.002)
print("own", os.path.basename(os.environ["GATE_CLIENT_DIR"]), flush=True)
print("seen", " ".join(sorted(seen)), flush=True)
print("removed", removed, flush=True)
`;

/** B: 50 execs, each a different command line (no answer reused), then its own run id. */
const FIFTY = 'for i in $(seq 1 50); do /bin/echo "exec $i" || exit 9; done; echo "run $GATE_RUN"';

const MODES: [string, string, Record<string, string>][] = [
  ['workspace-write, session sandbox', 'sandbox_mode = "workspace-write"\n', {}],
  ['workspace-write, a sandbox of its own', 'sandbox_mode = "workspace-write"\n', { GATE_SESSION_SANDBOX: 'off' }],
  ['read-only', 'sandbox_mode = "read-only"\n', {}],
  // no sandbox: the gate's guard (src/sandbox/gate-state.ts) shows the run its own client folder alone
  ['danger-full-access', 'sandbox_mode = "danger-full-access"\n', {}],
];

/** Run A: its background job unlinking the clients' folders; A itself waits for it. Resolves once the job
 * runs; `lines` collects A's output. */
async function startUnlinker(rig: DaemonProc, env: Record<string, string>, stop: string) {
  const a = track(spawn(GATE_SH, ['-c', `python3 ./unlinker.py ${stop} & wait`], { env: { ...rig.env, ...env }, cwd: rig.ws, stdio: ['ignore', 'pipe', 'pipe'] }));
  const lines: string[] = [];
  let err = '';
  a.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  createInterface({ input: a.stdout! }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((r) => a.once('exit', (c) => r(c)));
  await waitFor(() => lines.includes('ready') || (a.exitCode !== null && Promise.reject(new Error(`A ended: ${err}`))), 'the unlinking job to start', 30_000);
  return { lines, exited, stderr: () => err };
}

for (const [mode, config, env] of MODES)
  test(`${mode}: a background job of run A unlinking the client folders does not touch run B's 50 execs`, { timeout: 120_000 }, async (t) => {
    const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], config }));
    t.after(async () => (killAll(), rig.close()));
    writeFileSync(join(rig.ws, 'unlinker.py'), UNLINKER);
    const stop = join(rig.te.dir, 'stop');
    const a = await startUnlinker(rig, env, stop);
    let b;
    try {
      b = await gateSh(rig, FIFTY, { env, timeoutMs: 90_000 });
    } finally {
      writeFileSync(stop, '');
    }
    await a.exited;
    assert.equal(b.code, 0, `run B failed while A's job unlinked: ${b.stderr}`);
    assert.equal(b.stdout.split('\n').filter((l) => l.startsWith('exec ')).length, 50, b.stdout);
    const runB = /^run (\S+)$/m.exec(b.stdout)?.[1];
    assert.ok(runB, b.stdout);
    // A's job saw its own run's folder alone (never B's), and did unlink what it could (its own run's)
    const seen = a.lines.find((l) => l.startsWith('seen'));
    assert.ok(seen, `A's job reported: ${a.lines.join('\n')} ${a.stderr()}`);
    const folders = seen.split(' ').slice(1);
    assert.ok(!folders.includes(runB), `A's job saw B's client folder: ${seen}`);
    const own = a.lines.find((l) => l.startsWith('own '))?.slice(4);
    assert.deepEqual(folders, [own], `A's job saw other folders than its run's own: ${seen}`);
  });

/** python3 naming.py dgram|stream RUN: an exec request naming RUN, as a datagram from this run's own client
 * folder or over stream.sock (no reply folder: the daemon asks the kernel who connected). Prints the reply's
 * type and code. The id is random: two sandboxes' pids are alike, and the daemon answers a known id's retry. */
const NAMING = `import json, os, socket, struct, sys
how, run = sys.argv[1], sys.argv[2]
body = json.dumps({"v": 1, "id": "naming-%s-%s" % (how, os.urandom(8).hex()), "type": "exec", "run_id": run, "program": "/bin/true", "argv": ["true"], "cwd": os.getcwd(), "pid": os.getpid(), "env": {}}).encode()
if how == "dgram":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    me = "%s/n-%d.sock" % (os.environ["GATE_CLIENT_DIR"], os.getpid())
    s.bind(me)
    s.settimeout(30)
    s.sendto(body, os.environ["GATE_REQUEST_SOCK"])
    recv = lambda: s.recv(65536)
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(os.environ["GATE_STREAM_SOCK"])
    s.sendall(struct.pack("<I", len(body)) + body)
    def exactly(n):
        got = b""
        while len(got) < n:
            k = s.recv(n - len(got))
            if not k:
                raise SystemExit("stream closed")
            got += k
        return got
    recv = lambda: exactly(struct.unpack("<I", exactly(4))[0])
while True:
    r = json.loads(recv())
    if r["type"] != "pending":
        break
if how == "dgram":
    os.unlink(me)
print("reply", how, r["type"], r.get("code", "-"), flush=True)
`;

/** Run B: prints its run id, then waits (its run live) until `go` exists, then runs `then` (B's own process). */
function startB(rig: DaemonProc, go: string, then: string, env: Record<string, string> = {}) {
  const b = track(
    spawn(GATE_SH, ['-c', `echo "run $GATE_RUN"; while [ ! -e ${go} ]; do /bin/sleep 0.05; done; ${then}`], {
      env: { ...rig.env, ...env },
      cwd: rig.ws,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  b.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  b.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => b.once('exit', (c) => r(c)));
  return { run: () => waitFor(() => /^run (\S+)$/m.exec(out)?.[1], 'run B to start'), exited, out: () => out + err };
}

for (const mode of ['workspace-write', 'danger-full-access'])
test(`${mode}: a request naming another live run, from a run's own client folder, is refused; naming its own run is answered`, { timeout: 120_000 }, async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], config: `sandbox_mode = "${mode}"\n` }));
  t.after(async () => (killAll(), rig.close()));
  writeFileSync(join(rig.ws, 'naming.py'), NAMING);
  const go = join(rig.te.dir, 'go');
  // run B waits (its run live) until the test has used its id
  const b = startB(rig, go, 'true');
  const runB = await b.run();
  try {
    const other = await gateSh(rig, `python3 ./naming.py dgram ${runB}`, { timeoutMs: 60_000 });
    assert.match(other.stdout, /^reply dgram error refused$/m, other.stdout + other.stderr);
    const own = await gateSh(rig, 'python3 ./naming.py dgram "$GATE_RUN"', { timeoutMs: 60_000 });
    assert.match(own.stdout, /^reply dgram exec -$/m, own.stdout + own.stderr);
  } finally {
    writeFileSync(go, '');
  }
  await b.exited;
  // the folders of finished runs go (within the daemon's sweep)
  const clients = rig.paths.clientDir;
  await waitFor(() => !readdirSync(clients).some((n) => n.startsWith('r-')) || undefined, 'the finished runs\' client folders to go', 30_000);
  assert.ok(existsSync(clients));
});

// Over stream.sock a request has no reply folder: before, one naming another live run was answered with that
// run's settled answers (docs/daemon.md said so). Now the daemon asks the kernel which process connected
// (SO_PEERCRED) and what that process sees of the client folders (src/daemon/peer-folder.ts): A's sandbox
// sees only A's folder, so A naming B is refused; B's own process, in B's sandbox, is answered.
for (const [mode, config, env] of MODES)
  test(`${mode}: a stream request naming another live run is refused; the same from that run's own process is answered`, { timeout: 120_000 }, async (t) => {
    const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], config }));
    t.after(async () => (killAll(), rig.close()));
    writeFileSync(join(rig.ws, 'naming.py'), NAMING);
    const go = join(rig.te.dir, 'go');
    const b = startB(rig, go, 'python3 ./naming.py stream "$GATE_RUN"', env);
    const runB = await b.run();
    let other;
    try {
      other = await gateSh(rig, `python3 ./naming.py stream ${runB}`, { env, timeoutMs: 60_000 });
    } finally {
      writeFileSync(go, '');
    }
    assert.equal(await b.exited, 0, b.out());
    assert.match(other.stdout, /^reply stream error refused$/m, other.stdout + other.stderr);
    assert.match(b.out(), /^reply stream exec -$/m, b.out());
  });
