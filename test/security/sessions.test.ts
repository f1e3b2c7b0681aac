// Another session's approval channel is out of the sandbox's reach (issue 28, finding 4), end to end: two
// real daemons of the same user under two runtime folders; from inside session A's sandbox (workspace-write
// with /tmp writable, and read-only), `gate config set` aimed at session B must not change B, in each mode.
// The same command from outside does change B (so the refusal inside is the sandbox's). And the folders
// where another daemon of this user would keep its sockets (/run/user/<uid>, the /tmp/gate-sh-<uid>
// fallback, $XDG_RUNTIME_DIR) are hidden whole, whatever is in them. Test-only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH, tempEnv } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';
import { turnSandboxArgv } from '../../src/sandbox/bwrap-argv.js';
import { fakeFs } from '../../src/sandbox/fs-view.js';
import { socketFolders } from '../../src/sandbox/sockets.js';

const rigs: DaemonProc[] = [];
after(async () => {
  for (const r of rigs) await r.close();
});

async function daemon(config: string, o: { runtimeInside?: boolean } = {}): Promise<DaemonProc> {
  const te = tempEnv({}, o);
  const d = await startDaemon({ te, rules: [], config, env: { GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' }, workspace: 'w' });
  rigs.push(d);
  return d;
}

/** B's approval policy and sandbox mode, asked on B's approval channel from outside. */
async function settingsOf(b: DaemonProc): Promise<string> {
  const p = await run(process.execPath, [GATE, 'config', 'get', 'approval_policy'], { env: b.env });
  const m = await run(process.execPath, [GATE, 'config', 'get', 'sandbox_mode'], { env: b.env });
  return `${p.stdout.trim()} ${m.stdout.trim()}`;
}

let b: DaemonProc;
test('session B: a daemon of the same user under another runtime folder', async () => {
  b = await daemon('sandbox_mode = "workspace-write"\n');
  assert.equal(await settingsOf(b), 'on-request workspace-write');
});

for (const [mode, config] of [
  ['workspace-write', 'sandbox_mode = "workspace-write"\n'],
  ['read-only', 'sandbox_mode = "read-only"\n'],
] as const) {
  test(`${mode}: gate config set from inside session A's sandbox does not reach session B`, async () => {
    const a = await daemon(config);
    assert.notEqual(a.paths.runtime, b.paths.runtime);
    // the attack: B's runtime folder named in the environment of a program run inside A's sandbox
    const script = [
      `XDG_RUNTIME_DIR=${b.env.XDG_RUNTIME_DIR} node ${GATE} config set approval_policy never; echo "policy=$?"`,
      `XDG_RUNTIME_DIR=${b.env.XDG_RUNTIME_DIR} node ${GATE} config set sandbox_mode danger-full-access; echo "mode=$?"`,
    ].join('\n');
    const r = await run(GATE_SH, ['-c', script], { env: a.env, cwd: a.ws });
    assert.match(r.stdout, /policy=[1-9]/, r.stderr);
    assert.match(r.stdout, /mode=[1-9]/, r.stderr);
    assert.equal(await settingsOf(b), 'on-request workspace-write', r.stdout + r.stderr);
  });
}

test('the same gate config set from outside does change session B (the refusals above are the sandbox)', async () => {
  const r = await run(process.execPath, [GATE, 'config', 'set', 'approval_policy', 'never'], { env: b.env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await settingsOf(b), 'never workspace-write');
});

test("the folders of another daemon's sockets are hidden whole, in every sandbox mode", () => {
  const fs = fakeFs({
    '/w': 'dir',
    '/run/user/1000/bus': 'file',
    '/run/user/1000/gate-sh/other/approval/approval.sock': 'file',
    '/tmp/gate-sh-1000/default/approval/approval.sock': 'file',
    '/tmp/tmux-1000/default': 'file',
    '/tmp/.X11-unix/X0': 'file',
    '/x/rt/gate-sh/s/req/request.sock': 'file',
  });
  const ctx = {
    cwd: '/w',
    env: {},
    hiddenPaths: ['/x/rt/gate-sh'],
    protectedExtra: [],
    runtimeRequestDir: '/x/rt/gate-sh/s/req',
    fs,
    hostSockets: { folders: socketFolders(1000, { XDG_RUNTIME_DIR: '/run/user/1000' }, ['/x/rt/gate-sh']), listed: [] },
  };
  for (const policy of [
    { type: 'read-only' as const },
    { type: 'workspace-write' as const, writable_roots: [], network_access: true, exclude_tmpdir_env_var: false, exclude_slash_tmp: false },
    { type: 'external-sandbox' as const, network_access: 'restricted' as const },
  ]) {
    const argv = turnSandboxArgv(policy, ctx)!.join(' ');
    for (const f of ['/run/user/1000', '/tmp/gate-sh-1000', '/tmp/tmux-1000', '/tmp/.X11-unix'])
      assert.ok(argv.includes(`--tmpfs ${f} `) && argv.includes(`--remount-ro ${f} `), `${policy.type}: ${f} hidden: ${argv}`);
    // the session's own request folder is still bound back, after everything that hides it
    assert.ok(argv.indexOf('--ro-bind /x/rt/gate-sh/s/req /x/rt/gate-sh/s/req') > argv.lastIndexOf('--tmpfs'), argv);
  }
});

// Another session's request channel too (its request.sock, stream.sock, escalate.sock): a session whose
// runtime folder lies outside the folders hidden whole (here under its own temp folder in /tmp, as with an
// XDG_RUNTIME_DIR set elsewhere) had its request folder's sockets left out of the per-socket masks, so a
// program in A's sandbox could connect to them. Only A's own request folder is reachable now.
const PROBE = `// connects to each path given: "reached" when something serves there (a stream socket accepts, or a
// datagram one answers EPROTOTYPE: it is there, of another type), else the error
const net = require('node:net');
for (const p of process.argv.slice(2)) {
  const c = net.connect(p);
  c.on('connect', () => (console.log(p + ' reached'), c.destroy()));
  c.on('error', (e) => console.log(p + ' ' + (e.code === 'EPROTOTYPE' ? 'reached' : e.code)));
}
`;

for (const [mode, config] of [
  ['workspace-write', 'sandbox_mode = "workspace-write"\n'],
  ['read-only', 'sandbox_mode = "read-only"\n'],
] as const) {
  test(`${mode}: another session's request channel is out of reach from A's sandbox, A's own is not`, async () => {
    const c = await daemon('sandbox_mode = "workspace-write"\n', { runtimeInside: true });
    const a = await daemon(config);
    writeFileSync(join(a.ws, 'probe.js'), PROBE);
    const theirs = [c.paths.requestSock, c.paths.streamSock, c.paths.escalateSock];
    const args = [...theirs, a.paths.streamSock].join(' ');
    // from outside, every one of them is reached (so what fails inside is the sandbox)
    const out = await run(process.execPath, [join(a.ws, 'probe.js'), ...theirs, a.paths.streamSock], { env: a.env });
    for (const p of [...theirs, a.paths.streamSock]) assert.match(out.stdout, new RegExp(`${p} reached`), out.stdout + out.stderr);
    const r = await run(GATE_SH, ['-c', `node probe.js ${args}`], { env: a.env, cwd: a.ws });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`${a.paths.streamSock} reached`), r.stdout + r.stderr);
    // (and they still serve: what failed inside was the sandbox)
    const after = await run(process.execPath, [join(a.ws, 'probe.js'), ...theirs], { env: a.env });
    for (const p of theirs) assert.match(after.stdout, new RegExp(`${p} reached`), after.stdout + after.stderr);
    for (const p of theirs) assert.doesNotMatch(r.stdout, new RegExp(`${p} reached`), r.stdout + r.stderr);
    for (const p of theirs) assert.match(r.stdout, new RegExp(`${p} (ECONNREFUSED|ENOENT|EACCES)`), r.stdout + r.stderr);
  });
}
