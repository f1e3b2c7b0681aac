/**
 * Escalated execs: an explicit allow rule makes the exec gate answer Escalate(Unsandboxed); the daemon's
 * runner starts the command with the caller's own descriptors. Real daemon, gate-sh, bash, node-pty.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { GATE_SH } from '../helpers/env.js';
import { asInlineCode, escFixture, gateSh, execGateOptions, SANITIZER_BUILD } from './helpers.js';
import { type DaemonProc, killAll, startDaemon, waitFor } from '../helpers/daemon.js';

/** Run `script` as the model's own inline code (helpers.ts, asInlineCode): pre-flight sees only python3, every
 * exec in it meets the gate unsettled, as the model's own command. */
function inFile(rig: DaemonProc, script: string, o: { input?: string; timeoutMs?: number } = {}) {
  return gateSh(rig, asInlineCode(script), o);
}


const ESC = escFixture();

async function escRig(o: { bashRule?: boolean } = {}): Promise<{ rig: DaemonProc; esc: string; daemonPid: number }> {
  const esc = ESC;
  // `bash` allowed only where asked (the PTY test's `bash ./tty.sh`): under inFile the exec of /bin/bash is
  // the model's own, and such a rule would escalate the whole script with it
  const rules = [`prefix_rule(pattern=["${esc}"], decision="allow")`, ...(o.bashRule ? ['prefix_rule(pattern=["bash"], decision="allow")'] : [])];
  const rig = await startDaemon(execGateOptions({ rules }));
  const daemonPid = Number(readFileSync(rig.paths.pidFile, 'utf8').trim());
  return { rig, esc, daemonPid };
}

test('an escalated command runs in the daemon with the caller\'s pipe, stdin and exit statuses 0-255 and 128+n', async (t) => {
  const { rig, esc, daemonPid } = await escRig();
  t.after(async () => (killAll(), rig.close()));
  const info = await inFile(rig, `${esc} info | cat`);
  assert.equal(info.code, 0, info.stderr);
  // the daemon starts it through the kernel layer's launcher: daemon → gate-launch → its supervisor → esc.sh
  assert.match(info.stdout, new RegExp(`^ancestors=( \\d+){2} ${daemonPid}$`, 'm'), 'not started by the daemon');
  assert.match(info.stdout, /^cwd=.*\/w$/m);
  const upper = await inFile(rig, `${esc} cat`, { input: 'hello from stdin\n' });
  assert.equal(upper.stdout, 'HELLO FROM STDIN\n', upper.stderr);
  // 257 escalations take over 30 s on a loaded machine: the caller's gate-sh must outlive them (once it is
  // killed, its run's escalations are refused: they come from no live run's tree, issue 28)
  const codes = await inFile(rig, `for i in $(seq 0 255); do ${esc} exit $i; printf '%s ' $?; done; ${esc} signal; echo $?`, { timeoutMs: SANITIZER_BUILD ? 540_000 : 180_000 });
  assert.equal(codes.stdout, [...Array(256).keys()].join(' ') + ' 143\n', codes.stderr);
  const last = await inFile(rig, `${esc} exit 42`);
  assert.equal(last.code, 42);
});

test('an escalated command writes to a terminal as a terminal (PTY)', async (t) => {
  const { rig, esc } = await escRig({ bashRule: true });
  t.after(async () => (killAll(), rig.close()));
  const pty = createRequire(import.meta.url)('node-pty');
  writeFileSync(join(rig.ws, 'tty.sh'), `${esc} info; sleep 0.3\n`);
  const p = pty.spawn(GATE_SH, ['-c', 'bash ./tty.sh'], { env: rig.env, cwd: rig.ws, cols: 80, rows: 24 });
  let out = '';
  p.onData((d: string) => (out += d));
  const code = await new Promise<number>((r) => p.onExit((e: { exitCode: number }) => r(e.exitCode)));
  assert.equal(code, 0, out);
  assert.match(out, /ppid=\d+/);
  assert.match(out, /stdin-tty/);
  assert.match(out, /stdout-tty/);
});

test('killing the caller kills the escalated command; its signals reach it', async (t) => {
  const { rig, esc } = await escRig();
  t.after(async () => (killAll(), rig.close()));
  const pidFile = join(rig.ws, 'esc.pid');
  const callerFile = join(rig.ws, 'caller.pid');
  const run = inFile(rig, `${esc} sleep ${pidFile} & echo $! > ${callerFile}; wait $!`);
  const escPid = await waitFor(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()) || undefined, 'the escalated command to start');
  const caller = Number(readFileSync(callerFile, 'utf8').trim());
  assert.ok(alive(Number(escPid)));
  process.kill(caller, 'SIGKILL');
  await waitFor(() => !alive(Number(escPid)) || undefined, 'the escalated command to die', 5000);
  const r = await run;
  assert.equal(r.code, 137);

  // a catchable signal for the caller reaches the escalated command instead: it ends with 128+15
  const pidFile2 = join(rig.ws, 'esc2.pid');
  const callerFile2 = join(rig.ws, 'caller2.pid');
  const run2 = inFile(rig, `${esc} sleep ${pidFile2} & echo $! > ${callerFile2}; wait $!; echo status=$?`);
  const escPid2 = Number(await waitFor(() => (existsSync(pidFile2) && readFileSync(pidFile2, 'utf8').trim()) || undefined, 'the second escalated command'));
  process.kill(Number(readFileSync(callerFile2, 'utf8').trim()), 'SIGTERM');
  await waitFor(() => !alive(escPid2) || undefined, 'the escalated command to end on SIGTERM', 5000);
  assert.match((await run2).stdout, /status=143/);
});

test('code-loading variables turn an escalation into a prompt (no approver: denied); forged cwd and environment are refused or reset', async (t) => {
  const { rig, esc } = await escRig();
  t.after(async () => (killAll(), rig.close()));
  const plain = await inFile(rig, `${esc} info`);
  assert.match(plain.stdout, /^pythonpath=$/m, plain.stderr);
  const loaded = await inFile(rig, `PYTHONPATH=/tmp/evil ${esc} info`);
  assert.doesNotMatch(loaded.stdout, /pythonpath=\/tmp\/evil/);
  assert.match(loaded.stderr, /gate-sh: denied: .*(approv|prompt)/i, loaded.stderr);

  // A process inside the run forges an exec request (another cwd / a clean environment), then escalates. (The
  // model's own code, read from stdin: a program running its own file is refused before either check, as
  // test/exec-gate/provenance-forged.test.ts shows.)
  const forge = join(rig.ws, 'forge.py');
  writeFileSync(forge, FORGE);
  const badCwd = await inFile(rig, `python3 - ${esc} /usr '' < ${forge}`);
  assert.match(badCwd.stdout, /"error": ".*decided for \/usr"/, badCwd.stdout + badCwd.stderr);
  const badEnv = await inFile(rig, `python3 - ${esc} "$PWD" PYTHONPATH=/tmp/evil < ${forge}`);
  assert.match(badEnv.stdout, /^pythonpath=$/m, badEnv.stdout + badEnv.stderr);
  assert.match(badEnv.stdout, /"exit_status": 0/);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return false;
  }
}

/** python3 forge.py PROGRAM CLAIMED_CWD EXTRA_ENV: an exec request claiming CLAIMED_CWD and no environment,
 * then the escalation with the real environment plus EXTRA_ENV. Prints the runner's answer. (It also claims
 * to be the run's own shell, `host_pid` its parent's: a request that does not say whose it is no longer gets
 * an escalation at all, issue 29; the escalation socket's checks must hold even for one that lies.) */
const FORGE = `import json, os, socket, struct, sys
prog, claim, extra = sys.argv[1], sys.argv[2], sys.argv[3]
e = os.environ
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
me = "%s/forge-%d.sock" % (e["GATE_CLIENT_DIR"], os.getpid())
s.bind(me)
rid = "forge-%d" % os.getpid()
s.sendto(json.dumps({"v": 1, "id": rid, "type": "exec", "run_id": e["GATE_RUN"], "program": prog, "argv": [prog, "info"], "cwd": claim, "pid": os.getpid(), "host_pid": os.getppid(), "env": {}}).encode(), e["GATE_REQUEST_SOCK"])
while True:
    r = json.loads(s.recv(65536))
    if r["type"] != "pending":
        break
os.unlink(me)
tok = r.get("escalation_token")
if not tok:
    print("no token", r); sys.exit(1)
env = ["%s=%s" % kv for kv in e.items()] + ([extra] if extra else [])
body = json.dumps({"token": tok, "env": env}).encode()
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
print(json.dumps(json.loads(data[4:].decode())))
`;

test('inside the turn sandbox (bubblewrap): rm is denied, writes outside fail, an allowed command escalates out of it', async (t) => {
  const rig = await startDaemon(
    execGateOptions({
      rules: [
        `prefix_rule(pattern=["${ESC}"], decision="allow")`,
        'prefix_rule(pattern=["rm"], decision="forbidden")',
      ],
      config: 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n',
    }),
  );
  t.after(async () => (killAll(), rig.close()));
  const outside = join(rig.te.dir, 'outside');
  writeFileSync(join(rig.ws, 'victim'), 'x');
  const r = await inFile(rig, `rm victim; echo rm=$?; echo x > ${outside}-direct; echo direct=$?; ${ESC} write ${outside}; echo esc=$?`);
  assert.match(r.stdout, /rm=126/, r.stderr);
  assert.match(r.stdout, /direct=1/, r.stderr);
  assert.match(r.stdout, /esc=0/, r.stderr);
  assert.ok(existsSync(join(rig.ws, 'victim')));
  assert.ok(!existsSync(`${outside}-direct`), 'a direct write left the sandbox');
  assert.equal(readFileSync(outside, 'utf8'), 'written\n');
});

test("a script of several commands: the one an allow rule names leaves the sandbox at its exec, as it does alone; the others stay in", async (t) => {
  const rig = await startDaemon(
    execGateOptions({
      rules: [`prefix_rule(pattern=["${ESC}"], decision="allow")`],
      config: 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n',
    }),
  );
  t.after(async () => (killAll(), rig.close()));
  const outside = join(rig.te.dir, 'outside');
  // the model's own script, spelled out: pre-flight settles each subcommand; only one is allowed by a rule, so
  // the script as a whole runs in the sandbox and the allowed command leaves it at its exec
  for (const [i, script] of [`true; ${ESC} write ${outside}-1`, `echo x > ${outside}-direct; ${ESC} write ${outside}-2 && true`].entries()) {
    const r = await gateSh(rig, script);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(`${outside}-${i + 1}`, 'utf8'), 'written\n', script);
  }
  assert.ok(!existsSync(`${outside}-direct`), 'a direct write left the sandbox');
  // alone, as before
  const alone = await gateSh(rig, `${ESC} write ${outside}-3`);
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(readFileSync(`${outside}-3`, 'utf8'), 'written\n');
});
