/**
 * Host sockets that come and go while sandboxes are built (the socket-mask race): every host socket a
 * sandbox could reach is masked one by one (src/sandbox/sockets.ts), and a socket removed between the
 * daemon's scan and the mask's mount made bubblewrap fail the whole run ("Can't bind mount /oldroot/dev/null
 * on /newroot/...", "Unable to find ... in mount table"), or left an empty file on the host where the
 * socket was. Here a churner keeps 200 listening sockets alive in a folder of /tmp (which workspace-write
 * shares with the host), removing and making them all the time (whole folders of them too, as a daemon's
 * socket folder goes), while gated commands run, one-shot and in the session sandbox: every one must run, a
 * socket that stays there the whole time must stay unreachable from each, and no file may be left outside
 * the sandbox where a socket was.
 * The churn folder is a tmpfs of a mount namespace of the test's own, where its daemon, gate-sh and the
 * churner run (nsenter): other sessions' sandboxes on this machine (other test files, other checkouts) never
 * see these sockets, so they neither fail on them nor leave files among them.
 * Real daemon, real gate-sh, gate-launch, bubblewrap and session holder. Test-only; everything lives in the
 * test's temp folder.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { type DaemonProc, startDaemon, track } from '../helpers/daemon.js';
import { run, type Result } from '../helpers/run.js';

/** How many gated commands each kind runs at least (two at a time). */
const COMMANDS = 10;
/** The churner's listening sockets at any time. */
const LIVE = 200;

// keeps `live` listening sockets in the folder, the oldest removed as each new one is made (some 400 a
// second: a socket lives half a second, about as long as a gated command takes to start); one in ten in a
// folder of ten that goes whole; `stable.sock` stays listening throughout. Prints `at N` each 100 sockets made.
// Ends when stdin closes (a folder then goes with whichever of its sockets is removed last); prints the sockets it
// made and the entries it found in a removed folder besides its own sockets (files left).
const CHURNER = `
import os, socket, sys, threading, collections, time, shutil
d, live = sys.argv[1], int(sys.argv[2])
stable = socket.socket(socket.AF_UNIX)
stable.bind(os.path.join(d, 'stable.sock'))
stable.listen(64)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
ring = collections.deque()
made = squatted = 0
def remove(s, p, folder, last=False):
    global squatted
    s.close()
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass
    while folder and (p.endswith('-9.sock') or last):
        for e in os.listdir(folder):
            squatted += 1
            q = os.path.join(folder, e)
            shutil.rmtree(q) if os.path.isdir(q) and not os.path.islink(q) else os.unlink(q)
        try:
            os.rmdir(folder)
            break
        except OSError:
            pass
print('ready', flush=True)
while not stop.is_set():
    folder = None
    if made % 100 >= 90:
        folder = os.path.join(d, 'f%d' % (made // 100))
        os.makedirs(folder, exist_ok=True)
        p = os.path.join(folder, 's%d-%d.sock' % (made, made % 10))
    else:
        p = os.path.join(d, 's%d.sock' % made)
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    s.listen(1)
    ring.append((s, p, folder))
    made += 1
    if made % 100 == 0:
        print('at', made, flush=True)
    while len(ring) > live:
        remove(*ring.popleft())
    time.sleep(0.0025)
while ring:
    s, p, folder = ring.popleft()
    remove(s, p, folder, not ring or ring[0][2] != folder)
print('made', made, 'squatted', squatted, flush=True)
`;

// connects to the socket named: what a sandboxed process gets
const PROBE = 'import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print("connected")\nexcept OSError as e: print(e.strerror)\n';

let rig: DaemonProc;
let churn: string;
let world: ChildProcess;
let churner: ChildProcess;
let churnerOut = '';

/** argv run in the test's mount namespace (in folder wd). */
const inWorld = (argv: string[], wd = '/'): string[] => ['nsenter', `--mount=/proc/${world.pid}/ns/mnt`, `--wd=${wd}`, '--', ...argv];

/** The first line a process writes (its end of line left out). */
function firstLine(c: ChildProcess): Promise<string> {
  return new Promise((res, rej) => {
    let got = '';
    const more = (d: Buffer): void => {
      got += d;
      if (!got.includes('\n')) return;
      c.stdout!.off('data', more);
      res(got.slice(0, got.indexOf('\n')));
    };
    c.stdout!.on('data', more);
    c.once('exit', () => rej(new Error(`ended before its first line: ${got}`)));
  });
}

before(async () => {
  const te = tempEnv();
  // in the test's temp folder under /tmp: seen by the sandbox (/tmp is shared), not the run's own folder
  churn = join(te.dir, 'churn');
  mkdirSync(churn);
  // a mount namespace of the test's own, its churn folder a tmpfs there alone; held while stdin is open
  const hold = `mount -t tmpfs -o size=4m,mode=755 tmpfs "$0" && echo ready && exec cat`;
  world = track(spawn('unshare', ['--mount', '--propagation', 'slave', '--', 'sh', '-c', hold, churn], { stdio: ['pipe', 'pipe', 'inherit'] }));
  assert.equal(await firstLine(world), 'ready');
  rig = await startDaemon({
    te,
    rules: [],
    config: 'sandbox_mode = "workspace-write"\n',
    env: { GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' },
    workspace: 'w',
    wrap: inWorld([], process.cwd()),
  });
  writeFileSync(join(rig.ws, 'probe.py'), PROBE);
  const c = inWorld(['python3', '-c', CHURNER, churn, String(LIVE)]);
  churner = track(spawn(c[0], c.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] }));
  churner.stdout!.on('data', (d) => (churnerOut += d));
  assert.equal(await firstLine(churner), 'ready');
});

after(async () => {
  if (churner && churner.exitCode === null) churner.kill('SIGKILL');
  await rig?.close();
  world?.stdin?.end();
});

/** The sockets the churner has made so far (its last `at N`). */
const madeSoFar = () => Math.max(0, ...[...churnerOut.matchAll(/^at (\d+)$/gm)].map((m) => Number(m[1])));

/** At least COMMANDS runs of the probe against the stable socket, two at a time, and more until every socket live
 * at the start has been replaced twice while they ran (a quiet machine runs ten in well under a second); the
 * failures, described. */
async function runMany(env: Record<string, string>): Promise<string[]> {
  const stable = join(churn, 'stable.sock');
  const failures: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < COMMANDS || madeSoFar() <= 2 * LIVE) {
      next++;
      const c = inWorld([GATE_SH, '-c', `python3 probe.py ${stable}`], rig.ws);
      const r: Result = await run(c[0], c.slice(1), { env: { ...rig.env, ...env } });
      if (r.code !== 0 || r.stdout !== 'Connection refused\n') failures.push(`exit ${r.code}: ${r.stdout.trim()} ${r.stderr.trim()}`);
    }
  };
  await Promise.all([worker(), worker()]);
  assert.equal(churner.exitCode, null, `the churner ended early: ${churnerOut}`);
  return failures;
}

test('outside the sandbox the stable socket answers (a refusal inside is the mask\'s)', async () => {
  const c = inWorld(['python3', '-c', PROBE, join(churn, 'stable.sock')]);
  const r = await run(c[0], c.slice(1), { env: rig.env });
  assert.equal(r.stdout, 'connected\n', r.stderr);
});

test(`one-shot sandboxes: ${COMMANDS} commands under 200 churning host sockets all run, none reaches a host socket`, async () => {
  const failures = await runMany({ GATE_SESSION_SANDBOX: 'off' });
  assert.deepEqual(failures, [], `${failures.length} failed`);
});

test(`the session sandbox: ${COMMANDS} commands under 200 churning host sockets all run, none reaches a host socket`, async () => {
  const failures = await runMany({});
  assert.deepEqual(failures, [], `${failures.length} failed`);
});

test('no file was left outside the sandbox where a churned socket was', async () => {
  assert.equal(churner.exitCode, null, `the churner ended early: ${churnerOut}`);
  const ended = new Promise<void>((res) => churner.once('exit', () => res()));
  churner.stdin!.end();
  await ended;
  const m = /made (\d+) squatted (\d+)/.exec(churnerOut);
  assert.ok(m, churnerOut);
  // at least the 200 live ones made over again: each socket there at the start was removed while commands ran
  // (how many more depends on the machine's load: 1,000s on a quiet one)
  assert.ok(Number(m[1]) > 2 * LIVE, `the churner made only ${m[1]} sockets`);
  // (seen from the test's namespace: the host sees an empty folder)
  const c = inWorld(['find', churn, '-mindepth', '1', '-not', '-type', 's']);
  const left = await run(c[0], c.slice(1), { env: rig.env });
  assert.equal(left.code, 0, left.stderr);
  assert.deepEqual(left.stdout.split('\n').filter(Boolean), []);
  assert.equal(m[2], '0', 'entries were found in a removed socket folder');
});
