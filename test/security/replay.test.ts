/**
 * Issue 28, finding 2: a one-time approval replayed from inside the sandbox. Run A asks to leave the
 * sandbox for `make` (a `prompt` rule; `gate-sh --escalate`), a person approves, and make runs outside the
 * sandbox; its Makefile appends a line to a file no sandbox can write. Run B, a later gated script with no person attached, names run A's id (in the audit
 * log) in its own exec request for `make`, gets the escalation token of A's settlement, and redeems it on
 * escalate.sock with its own descriptors, as the red team did: before the fix make ran outside the sandbox
 * again, with no prompt. Now a finished run's settlements and grants end with it, and a grant is redeemed
 * only by a process of its own run's tree (SO_PEERCRED), so it fails the same way while A still runs; and
 * before any of that, a request naming A is refused unless it comes from A's client folder, by datagram or
 * over stream.sock.
 * In each mode with a sandbox to leave (workspace-write, read-only). Real daemon, real gate-sh, bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GATE, GATE_SH } from '../helpers/env.js';
import { gateSh, execGateOptions, run } from '../exec-gate/helpers.js';
import { type DaemonProc, killAll, startDaemon, track, waitFor } from '../helpers/daemon.js';

/** python3 replay.py RUN_ID: an exec request for make in RUN_ID's name, then its escalation redeemed
 * with this process's descriptors. Prints "no token" and the reply, or the runner's answer. */
const REPLAY = `import json, os, socket, struct, sys
run = sys.argv[1]
e = os.environ
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
me = "%s/replay-%d.sock" % (e["GATE_CLIENT_DIR"], os.getpid())
s.bind(me)
s.settimeout(60)
req = lambda tag: json.dumps({"v": 1, "id": "replay-%s-%d" % (tag, os.getpid()), "type": "exec", "run_id": run, "program": "/usr/bin/make", "argv": ["make"], "cwd": os.getcwd(), "pid": os.getpid(), "env": {}}).encode()
s.sendto(req("d"), e["GATE_REQUEST_SOCK"])
while True:
    r = json.loads(s.recv(65536))
    if r["type"] != "pending":
        break
os.unlink(me)
if r.get("type") == "error" and r.get("code") == "refused":
    # from this run's own client folder: refused; stream.sock has no reply folder: the same request there
    print("datagram refused", flush=True)
    t = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    t.connect(e["GATE_STREAM_SOCK"])
    t.settimeout(60)
    body = req("s")
    t.sendall(struct.pack("<I", len(body)) + body)
    def exactly(n):
        got = b""
        while len(got) < n:
            k = t.recv(n - len(got))
            if not k:
                raise SystemExit("stream closed")
            got += k
        return got
    while True:
        r = json.loads(exactly(struct.unpack("<I", exactly(4))[0]))
        if r["type"] != "pending":
            break
    t.close()
tok = r.get("escalation_token")
if not tok:
    print("no token", json.dumps(r.get("action")), r.get("code", "-"))
    sys.exit(0)
body = json.dumps({"token": tok, "env": ["%s=%s" % kv for kv in e.items()]}).encode()
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(e["GATE_ESCALATE_SOCK"])
socket.send_fds(c, [struct.pack("<I", len(body)) + body], [0, 1, 2])
data = b""
while True:
    k = c.recv(65536)
    if not k:
        break
    data += k
sys.stdout.flush()
print("runner", json.dumps(json.loads(data[4:].decode())))
`;

interface Rec { kind: string; run_id?: string; argv?: string[]; action?: string }

/** A person approving run A's prompts, who then leaves (`leave`). */
async function approver(rig: DaemonProc): Promise<{ leave(): Promise<void> }> {
  const a = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'person'], { env: rig.env, stdio: ['pipe', 'pipe', 'ignore'] }));
  let attached = false;
  const gone = new Promise<void>((r) => a.once('exit', () => r()));
  createInterface({ input: a.stdout! }).on('line', (l) => {
    const e = JSON.parse(l) as { type: string; approval_id?: string };
    if (e.type === 'attached') attached = true;
    if (e.type === 'prompt') a.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: 'approved' }) + '\n');
  });
  await waitFor(() => attached, 'the approver to attach');
  return { leave: async () => (a.kill('SIGTERM'), await gone) };
}

function makeRun(rig: DaemonProc): string {
  const recs = readFileSync(rig.paths.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
  const d = recs.find((x) => x.kind === 'decision' && x.argv?.[0] === 'make' && x.action?.startsWith('Escalate'));
  assert.ok(d?.run_id, 'run A escalated make');
  return d.run_id;
}

for (const mode of ['workspace-write', 'read-only'] as const)
  for (const when of ['finished', 'still running'] as const)
    test(`${mode}: run B cannot replay run A's approved make escalation (A ${when})`, { timeout: 120_000 }, async (t) => {
      const rig = await startDaemon(
        execGateOptions({
          rules: ['prefix_rule(pattern=["make"], decision="prompt")', 'prefix_rule(pattern=["rm"], decision="forbidden")', 'prefix_rule(pattern=["curl"], decision="forbidden")'],
          // /tmp not writable: the file outside is out of every sandbox's reach
          config:
            mode === 'read-only'
              ? 'sandbox_mode = "read-only"\n'
              : 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n',
          env: { GATE_APPROVAL_TIMEOUT_MS: '1500' },
        }),
      );
      t.after(async () => (killAll(), rig.close()));
      const outside = join(rig.te.dir, 'outside');
      mkdirSync(outside);
      const made = join(outside, 'made');
      // make itself appends (no recipe to exec: what runs it is what writes)
      writeFileSync(join(rig.ws, 'Makefile'), `$(file >>${made},made)\nall: ;\n`);
      writeFileSync(join(rig.ws, 'replay.py'), REPLAY);
      const stop = join(rig.te.dir, 'stop');
      execFileSync('mkfifo', [stop]);
      const person = await approver(rig);
      // A asks to leave the sandbox for make (gate-sh --escalate); the person approves
      const a = run(
        GATE_SH,
        ['--escalate', '--justification', 'build', '-c', when === 'finished' ? 'make; echo a=$?' : `make; echo a=$?; read -r x < ${stop}`],
        { env: rig.env, cwd: rig.ws, timeoutMs: 90_000 },
      );
      // (make makes the file before it writes the line: wait for the line)
      await waitFor(() => (existsSync(made) && readFileSync(made, 'utf8').endsWith('\n')) || undefined, 'run A to make, outside the sandbox', 60_000);
      if (when === 'finished') assert.match((await a).stdout, /^a=0$/m);
      await person.leave();
      assert.equal(readFileSync(made, 'utf8'), 'made\n', 'the approved make ran once, outside the sandbox');
      const runA = makeRun(rig);
      const b = await gateSh(rig, `python3 ./replay.py ${runA}`, { timeoutMs: 60_000 });
      if (when !== 'finished') {
        writeFileSync(stop, 'go\n');
        assert.match((await a).stdout, /^a=0$/m);
      }
      assert.equal(b.code, 0, b.stdout + b.stderr);
      assert.equal(readFileSync(made, 'utf8'), 'made\n', `run B ran make outside the sandbox again: ${b.stdout}`);
      // the request naming A comes from B's own client folder: refused before anything of A is looked at
      // (per-run client folders). Over stream.sock, which has no reply folder, refused too: the process that
      // connected sees B's client folder, not A's (src/daemon/peer-folder.ts). (Before, it met the later
      // defences: finished, nothing of A was left to reuse; still running, the token was refused, B not
      // being a process of A.)
      assert.match(b.stdout, /^datagram refused$/m, b.stdout + b.stderr);
      assert.match(b.stdout, /^no token null refused$/m, b.stdout + b.stderr);
    });
