// The host's Unix sockets are out of the sandbox's reach (issue 28, finding 3), end to end: a real daemon
// (`rm` forbidden), real gate-sh, bubblewrap and the exec gate, in each sandbox mode that has a sandbox.
// The attack as the red team made it: `tmux send-keys` into a tmux server the test starts outside (Debian's
// tmux), typing into the user's own ungated shell; and a plain Unix socket server of the test's own outside
// the sandbox, by path and abstract. Each is shown reaching its target from outside (the same command, no
// sandbox), so a refusal inside is the sandbox's. Test-only; everything lives in the test's temp folders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { type DaemonProc, startDaemon, track, waitFor } from '../helpers/daemon.js';

// connect() to each socket named (a path, or @name for an abstract one), send a line; prints errno names
const PROBE = `
import errno, json, socket, sys
out = {}
for name in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    addr = '\\0' + name[1:] if name.startswith('@') else name
    try:
        s.connect(addr)
        s.sendall(b'hello from inside\\n')
        out[name] = 'ok'
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
print(json.dumps(out))
`;

// a program of the workspace running tmux (a program's child: the red team's route past pre-flight's
// judgement of tmux), then an allowed command and the forbidden rm, which must still be decided
const TYPER = `
import os, subprocess, sys
sock, target = sys.argv[1], sys.argv[2]
for keys in sys.argv[3:]:
    try:
        print('tmux', subprocess.run(['tmux', '-S', sock, 'send-keys', '-t', target, keys, 'Enter']).returncode)
    except OSError:
        print('tmux denied')  # the exec gate refused the exec
print('true', os.system('/bin/true'))
print('rm', os.system('rm -rf d'))
`;

const MODES: [string, string][] = [
  ['workspace-write', 'sandbox_mode = "workspace-write"\n'],
  ['workspace-write with the network on', 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nnetwork_access = true\n'],
  ['read-only', 'sandbox_mode = "read-only"\n'],
];

// the test's own servers, outside any sandbox: a path socket and an abstract one; each line heard is logged
const SERVER = `
import os, socket, sys, threading
log = open(sys.argv[3], 'a', buffering=1)
def serve(addr, tag):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    s.listen(16)
    def loop():
        while True:
            c, _ = s.accept()
            log.write(tag + ': ' + c.makefile().readline())
            c.close()
    threading.Thread(target=loop, daemon=True).start()
serve(sys.argv[1], 'path')
serve('\\0' + sys.argv[2], 'abstract')
print('ready', flush=True)
sys.stdin.read()
`;

let outside: string;
let tmuxSock: string;
let pathSock: string;
let abstractName: string;
let server: ChildProcess;
let heardLog: string;
const heard = (): string[] => (existsSync(heardLog) ? readFileSync(heardLog, 'utf8').split('\n').filter(Boolean) : []);
const tmuxEnv = () => ({ ...(process.env as Record<string, string>), TMUX: '', TMUX_TMPDIR: outside });

function tmux(...args: string[]): void {
  const r = spawnSync('tmux', ['-S', tmuxSock, ...args], { env: tmuxEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

/** Types a command into the outside shell and waits until it has run (tmux delivers keys in order). */
async function typedOutside(i: number): Promise<void> {
  const mark = join(outside, `mark-${i}`);
  tmux('send-keys', '-t', 'victim', `touch ${mark}`, 'Enter');
  await waitFor(() => existsSync(mark), 'the outside shell to run a typed command');
}

before(async () => {
  outside = spawnSync('mktemp', ['-d', '/tmp/gs-out-XXXXXX'], { encoding: 'utf8' }).stdout.trim();
  tmuxSock = join(outside, 'tmux.sock');
  pathSock = join(outside, 'srv.sock');
  abstractName = `gate-sh-test-${process.pid}-${Date.now()}`;
  // the user's own shell, outside any sandbox and any gate
  tmux('new-session', '-d', '-s', 'victim', '-x', '120', '-y', '20', 'bash --norc --noprofile');
  heardLog = join(outside, 'heard.log');
  server = track(spawn('python3', ['-c', SERVER, pathSock, abstractName, heardLog], { stdio: ['pipe', 'pipe', 'inherit'] }));
  await new Promise<void>((res) => server.stdout!.once('data', () => res()));
});

after(() => {
  spawnSync('tmux', ['-S', tmuxSock, 'kill-server'], { env: tmuxEnv() });
  server.kill();
  spawnSync('rm', ['-rf', outside]);
});

test('outside any sandbox the same commands reach the tmux server and the socket servers', async () => {
  const victim = join(outside, 'victim-outside');
  writeFileSync(victim, 'x');
  const r = spawnSync('bash', ['-c', `tmux -S ${tmuxSock} send-keys -t victim 'rm -f ${victim}' Enter`], { env: tmuxEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  await waitFor(() => !existsSync(victim), 'the typed rm to run in the outside shell');
  const before = heard().length;
  const p = spawnSync('python3', ['-c', PROBE, pathSock, '@' + abstractName], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(p.stdout), { [pathSock]: 'ok', ['@' + abstractName]: 'ok' }, p.stderr);
  await waitFor(() => heard().length >= before + 2, 'both servers to hear the probe');
});

for (const [mode, config] of MODES) {
  let rig: DaemonProc;
  let n = 0;
  test(`${mode}: start a daemon (rm forbidden)`, async () => {
    rig = await startDaemon({
      rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'],
      config,
      env: { GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' },
      workspace: 'w',
    });
    writeFileSync(join(rig.ws, 'probe.py'), PROBE);
    writeFileSync(join(rig.ws, 'typer.py'), TYPER);
  });

  test(`${mode}: tmux send-keys from inside types nothing into the user's tmux server`, async () => {
    const victim = join(outside, `victim-${mode.replace(/\W/g, '')}`);
    const pwned = join(outside, `pwned-${mode.replace(/\W/g, '')}`);
    writeFileSync(victim, 'keep\n');
    mkdirSync(join(rig.ws, 'd'), { recursive: true });
    const script = `python3 typer.py ${tmuxSock} victim 'rm -f ${victim}' 'touch ${pwned}'`;
    const r = await run(GATE_SH, ['-c', script], { env: { ...rig.env, TMUX: '' }, cwd: rig.ws });
    assert.equal(r.code, 0, r.stderr);
    // the request channel still works inside: an allowed command runs, the forbidden rm is denied
    assert.match(r.stdout, /^true 0$/m, r.stderr);
    assert.match(r.stdout, /^rm (-1|[1-9]\d*)$/m, r.stderr);
    assert.ok(existsSync(join(rig.ws, 'd')));
    await typedOutside(n++);
    assert.ok(existsSync(victim), `the forbidden rm typed from inside ran outside: ${r.stderr}`);
    assert.ok(!existsSync(pwned), `a command typed from inside ran outside: ${r.stderr}`);
  });

  test(`${mode}: a Unix socket server outside (path and abstract) gets no connection from inside`, async () => {
    const before = heard().length;
    const r = await run(GATE_SH, ['-c', `python3 probe.py ${pathSock} @${abstractName}`], { env: rig.env, cwd: rig.ws });
    assert.equal(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    assert.notEqual(o[pathSock], 'ok', 'the path socket was reached');
    assert.notEqual(o['@' + abstractName], 'ok', 'the abstract socket was reached');
    // the same servers still answer from outside: their silence above is the sandbox's
    const p = spawnSync('python3', ['-c', PROBE, pathSock], { encoding: 'utf8' });
    assert.equal(JSON.parse(p.stdout)[pathSock], 'ok');
    await waitFor(() => heard().length > before, 'the outside probe to be heard');
    assert.equal(heard().length, before + 1, `only the outside probe was heard: ${JSON.stringify(heard().slice(before))}`);
  });

  test(`${mode}: stop the daemon`, async () => {
    await rig.close();
  });
}

// danger-full-access has no sandbox: the user's tmux server is reachable (docs/threat-model.md), so what
// tmux hands it is decided as if the run made it — at pre-flight (the model's text) and at exec time (a
// program's own child), with the user's rules holding at both (issue 28, "What to build" 3)
test('danger-full-access: what tmux types into the user\'s server is decided as run here: the forbidden rm denied, an allowed command typed', async () => {
  const rig = await startDaemon({
    rules: ['prefix_rule(pattern=["rm"], decision="forbidden", justification="no deleting here")'],
    config: 'sandbox_mode = "danger-full-access"\n',
    env: { GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' },
    workspace: 'w',
  });
  try {
    writeFileSync(join(rig.ws, 'typer.py'), TYPER);
    const victim = join(outside, 'victim-dfa');
    const typed = join(outside, 'typed-dfa');
    writeFileSync(victim, 'keep\n');
    // the model's own text: denied at pre-flight by the rule about what tmux types, nothing typed
    const pre = await run(GATE_SH, ['-c', `tmux -S ${tmuxSock} send-keys -t victim 'rm -f ${victim}' Enter`], { env: { ...rig.env, TMUX: '' }, cwd: rig.ws });
    assert.equal(pre.code, 126, pre.stderr);
    assert.match(pre.stderr, /no deleting here/);
    // a program's child: tmux typing rm is denied when it execs; typing an allowed command still works
    const r = await run(GATE_SH, ['-c', `python3 typer.py ${tmuxSock} victim 'rm -f ${victim}' 'touch ${typed}'`], { env: { ...rig.env, TMUX: '' }, cwd: rig.ws });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^tmux denied$/m, 'the tmux typing rm was refused');
    assert.match(r.stdout, /^rm (-1|[1-9]\d*)$/m, r.stderr);
    await waitFor(() => existsSync(typed), 'the allowed typed command to run in the outside shell');
    await typedOutside(100);
    assert.ok(existsSync(victim), `the forbidden rm typed through tmux ran outside: ${r.stderr}`);
  } finally {
    await rig.close();
  }
});
