// The daemon's request folder inside the sandbox, end to end: real daemon (workspace-write, `rm` forbidden),
// real gate-sh, bubblewrap, exec gate. A process inside a run must not be able to unlink the daemon's
// sockets and bind its own in their place (a fake daemon would then answer Run to every exec check of the
// run, and the real daemon would be gone for everybody): the folder is read-only inside, only its clients'
// folder is writable. Checked in the turn sandbox (joining the session sandbox, and a sandbox of its own)
// and in an escalated run's permission-profile sandbox. Test-only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { gateSh, run, execGateOptions } from '../exec-gate/helpers.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

// What a process inside tries. Every result is `ok` or the errno's name. "outside" only does what cannot
// hurt the daemon (a file made and removed in the request folder), to show the probe can succeed there.
const PROBE = `
import errno, json, os, socket, sys
env = os.environ
req = os.path.dirname(env['GATE_REQUEST_SOCK'])
cdir = env['GATE_CLIENT_DIR']
def attempt(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def make_file(p):
    with open(p, 'w') as f:
        f.write('x')
def bind_at(p):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.bind(p)
    finally:
        s.close()
out = {}
tag = os.urandom(6).hex()  # pids repeat across sandboxes; the daemon answers a repeated request id once
mine = os.path.join(req, 'probe-' + tag)
out['file in req'] = attempt(lambda: make_file(mine))
if out['file in req'] == 'ok':
    out['unlink it'] = attempt(lambda: os.unlink(mine))
if sys.argv[1:] != ['outside']:
    for k in ('GATE_REQUEST_SOCK', 'GATE_STREAM_SOCK', 'GATE_ESCALATE_SOCK'):
        p = env[k]
        name = os.path.basename(p)
        out['unlink ' + name] = attempt(lambda: os.unlink(p))
        out['rename ' + name] = attempt(lambda: os.rename(p, os.path.join(req, 'moved')))
        out['bind at ' + name] = attempt(lambda: bind_at(p))
    out['bind in req'] = attempt(lambda: bind_at(os.path.join(req, 'fake.sock')))
    out['rmdir c'] = attempt(lambda: os.rmdir(cdir))
# the clients' folder: a file and a socket made and unlinked there
cf = os.path.join(cdir, 'probe-' + tag)
out['file in c'] = attempt(lambda: make_file(cf))
out['unlink in c'] = attempt(lambda: os.unlink(cf))
out['bind in c'] = attempt(lambda: bind_at(cf + '.sock'))
out['unlink socket in c'] = attempt(lambda: os.unlink(cf + '.sock'))
# the daemon still answers on its socket: a ping from a reply socket in c/
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(cf + '.ping')
s.settimeout(10)
s.sendto(json.dumps({'v': 1, 'id': 'probe-' + tag, 'type': 'ping'}).encode(), env['GATE_REQUEST_SOCK'])
out['ping'] = json.loads(s.recv(65536))['type']
s.close()
os.unlink(cf + '.ping')
if sys.argv[1:] != ['outside']:
    # exec checks still reach the daemon: an allowed command runs, the forbidden rm is denied, and a nested
    # bash comes back through gate-sh, which connects to the request socket from inside
    out['true'] = os.system('/bin/true')
    out['rm'] = os.system('rm -f victim')
    out['nested'] = os.popen("bash -c 'echo nested'").read()
print(json.dumps(out))
`;

const DENIED = 'EROFS'; // what Linux answers for a change on a read-only mount
const INSIDE = {
  'file in req': DENIED,
  'unlink request.sock': DENIED,
  'rename request.sock': DENIED,
  // the socket is still there: binding at its path finds it in use, whatever the mount
  'bind at request.sock': 'EADDRINUSE',
  'unlink stream.sock': DENIED,
  'rename stream.sock': DENIED,
  'bind at stream.sock': 'EADDRINUSE',
  'unlink escalate.sock': DENIED,
  'rename escalate.sock': DENIED,
  'bind at escalate.sock': 'EADDRINUSE',
  'bind in req': DENIED,
  // the clients' folder cannot be removed (or renamed) to put another in its place
  'rmdir c': DENIED,
  'file in c': 'ok',
  'unlink in c': 'ok',
  'bind in c': 'ok',
  'unlink socket in c': 'ok',
  ping: 'ack',
  true: 0,
  nested: 'nested\n',
};

let rig: DaemonProc;
before(async () => {
  rig = await startDaemon({
    ...execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], env: { GATE_SANDBOX_MODE: 'workspace-write' } }),
    autoApprove: true,
  });
  writeFileSync(join(rig.ws, 'probe.py'), PROBE);
});
after(async () => {
  await rig.close();
});

function daemonSocketsThere(): void {
  for (const p of [rig.paths.requestSock, rig.paths.streamSock, rig.paths.escalateSock]) assert.ok(statSync(p).isSocket(), `${p} is still the daemon's`);
}

async function stillAnswers(): Promise<void> {
  const r = await gateSh(rig, 'echo still answering');
  assert.equal(r.stdout, 'still answering\n', r.stderr);
  assert.equal(r.code, 0);
}

test('outside any sandbox the probe can change the request folder (so the denials below are the mount)', async () => {
  const env = { ...rig.env, GATE_REQUEST_SOCK: rig.paths.requestSock, GATE_CLIENT_DIR: rig.paths.clientDir };
  const r = await run('python3', [join(rig.ws, 'probe.py'), 'outside'], { env, cwd: rig.ws });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    'file in req': 'ok',
    'unlink it': 'ok',
    'file in c': 'ok',
    'unlink in c': 'ok',
    'bind in c': 'ok',
    'unlink socket in c': 'ok',
    ping: 'ack',
  });
  assert.equal(dirname(rig.paths.clientDir), dirname(rig.paths.requestSock));
});

for (const [name, args, env] of [
  ['the turn sandbox, joining the session sandbox', ['-c', 'python3 probe.py'], {}],
  ['the turn sandbox of its own (session sandboxes off)', ['-c', 'python3 probe.py'], { GATE_SESSION_SANDBOX: 'off' }],
  ['an escalated run in exactly its permissions (a profile sandbox)', ['--with-permissions', '{"file_system":{"write":["."]}}', '-c', 'python3 probe.py'], {}],
] as [string, string[], Record<string, string>][]) {
  test(`${name}: the daemon's sockets cannot be unlinked or replaced; the clients' folder is writable; rm stays denied`, async () => {
    writeFileSync(join(rig.ws, 'victim'), 'keep\n');
    const prompts = rig.prompts.length;
    const r = await run(GATE_SH, args, { env: { ...rig.env, ...env }, cwd: rig.ws });
    assert.equal(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    const rm = o.rm;
    delete o.rm;
    assert.deepEqual(o, INSIDE, r.stderr);
    assert.notEqual(rm, 0, 'the forbidden rm was denied');
    assert.match(r.stderr, /gate-sh: denied: rm -f victim/);
    assert.equal(readFileSync(join(rig.ws, 'victim'), 'utf8'), 'keep\n');
    if (args[0] === '--with-permissions')
      assert.ok(
        rig.prompts.slice(prompts).some((p) => p.sandbox_permissions === 'with_additional_permissions' && p.command?.join(' ') === 'python3 probe.py'),
        'the profile run was asked for (and approved)',
      );
    daemonSocketsThere();
    assert.ok(!existsSync(join(dirname(rig.paths.requestSock), 'moved')));
    await stillAnswers();
    // and the same rm, asked for directly afterwards, is still denied before anything runs
    const d = await gateSh(rig, 'rm -f victim');
    assert.equal(d.code, 126);
    assert.match(d.stderr, /gate-sh: denied: rm -f victim/);
    assert.ok(existsSync(join(rig.ws, 'victim')));
  });
}
