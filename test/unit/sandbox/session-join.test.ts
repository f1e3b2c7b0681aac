// The session sandbox key and the joining plan (src/sandbox/session-join.ts): pure, no sandbox started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holderMountsProblem, joinPlan, runFolderBind, sessionSandboxOff, sessionShape } from '../../../src/sandbox/session-join.js';

const LAUNCH = '/opt/gate/shims/gate-launch';
const BWRAP = '/usr/bin/bwrap';
const base = (opts: string[], cwd = '/w') => ({
  program: LAUNCH,
  args: [BWRAP, '--ro-bind', '/', '/', '--bind', cwd, cwd, ...opts, '--unshare-pid', '--die-with-parent', '--chdir', cwd, '--', '/bin/bash', '-c', 'true'],
});

test('the key follows the mounts and the network, not the command or where it starts', () => {
  const a = sessionShape(base(['--unshare-net']))!;
  assert.equal(a.ownNetwork, true);
  assert.match(a.key, /^[0-9a-f]{64}$/);
  const other = base(['--unshare-net']);
  other.args.splice(other.args.indexOf('--chdir') + 1, 1, '/w/sub');
  other.args[other.args.length - 1] = 'echo another command';
  assert.equal(sessionShape(other)!.key, a.key, 'another cwd inside the same mounts, another command: same sandbox');
  assert.notEqual(sessionShape(base([]))!.key, a.key, 'network on is another sandbox');
  assert.equal(sessionShape(base([]))!.ownNetwork, false);
  assert.notEqual(sessionShape(base(['--unshare-net'], '/v'))!.key, a.key, 'another writable root is another sandbox');
  assert.notEqual(sessionShape(base(['--unshare-net', '--ro-bind', '/w/.git', '/w/.git']))!.key, a.key, 'one more mount is another sandbox');
});

test('a missing .git blocked by an empty read-only tmpfs and the empty folder bound read-only the next time are the same access', () => {
  const first = sessionShape(base(['--tmpfs', '/w/.git', '--unshare-net', '--remount-ro', '/w/.git']))!;
  const next = sessionShape(base(['--ro-bind', '/w/.git', '/w/.git', '--unshare-net']))!;
  assert.equal(first.key, next.key);
  // a writable tmpfs (not remounted read-only) is not the same as a read-only bind
  assert.notEqual(sessionShape(base(['--tmpfs', '/w/.git', '--unshare-net']))!.key, next.key);
});

test("each run's own client folder is not part of the sandbox's mounts: runs of one key share it, the holder holds req/c empty", () => {
  const req = '/rt/gate-sh/default/req';
  const folder = (run: string) => ['--unshare-net', '--ro-bind', req, req, '--tmpfs', `${req}/c`, '--bind', `${req}/c/${run}`, `${req}/c/${run}`, '--remount-ro', `${req}/c`];
  const a = sessionShape(base(folder('r-aaaa')))!;
  const b = sessionShape(base(folder('r-bbbb')))!;
  assert.equal(a.key, b.key, 'two runs, one sandbox');
  assert.ok(!a.mounts.some((m) => m.startsWith(`${req}/c/`)), `the holder never binds a run's folder: ${a.mounts.join(' ')}`);
  assert.ok(a.mounts.join(' ').includes(`--tmpfs ${req}/c --remount-ro ${req}/c`), a.mounts.join(' '));
  // the plan keeps the run's bind (for when bubblewrap builds the mounts, or gate-launch binds it itself)
  assert.ok(joinPlan(base(folder('r-aaaa')), { pid: 1, pidns: 2, netns: 3 }).args.includes(`${req}/c/r-aaaa`));
  // only exactly that shape: a bind elsewhere, deeper, or of another folder is a mount like any other
  assert.equal(runFolderBind(['--ro-bind', req, req, '--tmpfs', `${req}/c`, '--bind', `${req}/c/x/y`, `${req}/c/x/y`]), -1);
  assert.equal(runFolderBind(['--ro-bind', req, req, '--tmpfs', `${req}/d`, '--bind', `${req}/d/x`, `${req}/d/x`]), -1);
  assert.equal(runFolderBind(['--ro-bind', req, req, '--tmpfs', `${req}/c`, '--bind', '/w', `${req}/c/x`]), -1);
  assert.equal(runFolderBind(['--ro-bind', req, req, '--tmpfs', `${req}/c`, '--bind', `${req}/c/x`, `${req}/c/x`]), 5);
  assert.notEqual(sessionShape(base(['--unshare-net', '--bind', '/w/x', '/w/x']))!.key, sessionShape(base(['--unshare-net']))!.key);
});

test('joining drops the namespaces the holder provides and keeps every mount; other plans cannot join', () => {
  const p = base(['--unshare-net']);
  const j = joinPlan(p, { pid: 42, pidns: 4026531836, netns: 4026531840 });
  assert.deepEqual(j.args.slice(0, 3), ['--session-ns', '42:4026531836:4026531840', BWRAP]);
  assert.ok(!j.args.includes('--unshare-pid') && !j.args.includes('--unshare-net'));
  assert.deepEqual(j.args.slice(3), p.args.slice(1).filter((a) => a !== '--unshare-pid' && a !== '--unshare-net'));
  assert.equal(sessionShape({ program: '/bin/bash', args: ['-c', 'true'] }), null, 'no sandbox: nothing to join');
  assert.equal(sessionShape({ program: LAUNCH, args: ['/bin/bash', '-c', 'true'] }), null, 'danger-full-access under the launcher');
  assert.equal(sessionShape({ program: LAUNCH, args: ['--argv0', 'x', BWRAP, '--unshare-pid', '--', 'x'] }), null, 'an escalated command');
  assert.throws(() => joinPlan({ program: '/bin/bash', args: [] }, { pid: 1, pidns: 1, netns: 0 }));
  assert.ok(sessionSandboxOff({ GATE_SESSION_SANDBOX: 'off' }) && !sessionSandboxOff({}));
});

test('a holder gets only the daemon bubblewrap and mount options (issue 28): no other program, no option that writes the host', () => {
  const real = sessionShape(base(['--tmpfs', '/w/.git', '--unshare-net', '--symlink', 'usr/lib', '/lib', '--dev', '/dev', '--proc', '/proc', '--new-session', '--cap-drop', 'ALL', '--remount-ro', '/w/.git']))!;
  assert.equal(holderMountsProblem(real.mounts, BWRAP), undefined, 'what bwrap-argv.ts emits passes');
  assert.match(String(holderMountsProblem(['/w/evil.sh', '--ro-bind', '/', '/'], BWRAP)), /program is not \/usr\/bin\/bwrap/);
  assert.match(String(holderMountsProblem([BWRAP, '--bind', '/', '/', '--chmod', '0666', '/etc/shadow'], BWRAP)), /"--chmod" is not a mount/);
  for (const bad of [['--file', '3', '/etc/x'], ['--bind-data', '3', '/x'], ['--cap-add', 'ALL'], ['--cap-drop', 'CAP_SYS_ADMIN'], ['--seccomp', '3'], ['--args', '3'], ['--uid', '0']])
    assert.ok(holderMountsProblem([BWRAP, ...bad], BWRAP), bad.join(' '));
  assert.match(String(holderMountsProblem([BWRAP, '--bind', 'relative', '/x'], BWRAP)), /absolute/);
  assert.match(String(holderMountsProblem([BWRAP, '--tmpfs'], BWRAP)), /absolute/);
});

test("host sockets' masks are never the holder's: each command mounts its own as it joins (shims/gate-masks.h)", () => {
  const masks = ['--ro-bind-try', '/dev/null', '/tmp/a.sock', '--ro-bind-try', '/dev/null', '/tmp/b.sock'];
  const masked = sessionShape(base(['--unshare-net', ...masks]))!;
  const bare = sessionShape(base(['--unshare-net']))!;
  assert.deepEqual(masked.mounts, bare.mounts, 'no mask among the held mounts');
  assert.equal(masked.key, bare.key, 'sockets come and go: the same sandbox');
  // the plan keeps them: the command's own launcher mounts them
  assert.ok(joinPlan(base(['--unshare-net', ...masks]), { pid: 1, pidns: 2, netns: 3 }).args.join(' ').includes(masks.join(' ')));
  assert.match(String(holderMountsProblem([BWRAP, ...masks], BWRAP)), /"--ro-bind-try" is not a mount/);
});
