// The running edge: bwrap missing, missing programs (127 like bash), exit statuses, denial detection on
// real sandbox failures, and the sandbox step of a run plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { box, BWRAP } from './helpers.js';
import { findBwrap, runCommandLine } from '../../src/exec/sandbox-run.js';
import { sandboxDenial, denialReason } from '../../src/exec/sandbox-denial.js';
import { withSandbox } from '../../src/exec/sandbox-step.js';
import { turnSandboxArgv } from '../../src/sandbox/bwrap-argv.js';
import { wrapCommand } from '../../src/sandbox/wrap.js';
import { workspaceWrite } from '../../src/sandbox/policy.js';
import { BWRAP_MISSING, SandboxError } from '../../src/sandbox/errors.js';

test('bubblewrap missing: a clear error naming the package', () => {
  assert.throws(() => findBwrap({ PATH: '/nonexistent' }, []), (e: Error) => e instanceof SandboxError && e.message === BWRAP_MISSING);
  assert.match(BWRAP_MISSING, /apt-get install -y bubblewrap/);
  assert.equal(findBwrap({ PATH: '/nonexistent' }), BWRAP);
});

test('a "bwrap" earlier on the caller\'s PATH is never used', (t) => {
  const b = box();
  t.after(b.cleanup);
  const fake = join(b.dir, 'fakebin');
  mkdirSync(fake);
  writeFileSync(join(fake, 'bwrap'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  assert.equal(findBwrap({ PATH: `${fake}:/usr/bin:/bin` }), BWRAP);
  assert.ok(!BWRAP.startsWith(fake));
});

test('exit statuses through bwrap; a missing program is 127 like bash, not bwrap\'s 1', async (t) => {
  const b = box();
  t.after(b.cleanup);
  const args = turnSandboxArgv(workspaceWrite(), b.ctx())!;
  const raw = spawnSync(BWRAP, [...args, 'no-such-program-x'], { cwd: b.ws, env: b.env, encoding: 'utf8' });
  assert.equal(raw.status, 1, 'the trap: bwrap itself says 1');
  assert.match(raw.stderr, /bwrap: execvp no-such-program-x/);
  const o = { cwd: b.ws, env: b.env, stdio: 'pipe' as const };
  const missing = await runCommandLine(wrapCommand(['no-such-program-x'], args, BWRAP), { ...o, command: ['no-such-program-x'] });
  assert.deepEqual(missing, { status: 127, stderr: 'gate-sh: no-such-program-x: command not found\n' });
  const s42 = await runCommandLine(wrapCommand(['bash', '-c', 'exit 42'], args, BWRAP), { ...o, command: ['bash'] });
  assert.equal(s42.status, 42);
  const killed = await runCommandLine(wrapCommand(['bash', '-c', 'kill -TERM $$'], args, BWRAP), { ...o, command: ['bash'] });
  assert.equal(killed.status, 143);
});

test('denial detection: real sandbox failures are denials; ordinary failures are not', async (t) => {
  const b = box();
  t.after(b.cleanup);
  const args = turnSandboxArgv(workspaceWrite({ exclude_slash_tmp: true, exclude_tmpdir_env_var: true }), b.ctx())!;
  const o = { cwd: b.ws, env: b.env, stdio: 'pipe' as const, command: ['bash'] };
  const erofs = await runCommandLine(wrapCommand(['bash', '-c', `echo x > ${join(b.dir, 'outside')}`], args, BWRAP), o);
  assert.equal(sandboxDenial(erofs.status, erofs.stderr)?.kind, 'read-only-fs');
  const net = await runCommandLine(wrapCommand(['bash', '-c', 'exec 3<>/dev/tcp/192.0.2.1/80'], args, BWRAP), o);
  assert.equal(sandboxDenial(net.status, net.stderr)?.kind, 'network', net.stderr);
  assert.match(denialReason(sandboxDenial(net.status, net.stderr)!), /^no network in the sandbox: .*Network is unreachable/);
  const plain = await runCommandLine(wrapCommand(['bash', '-c', 'echo oops >&2; exit 3'], args, BWRAP), o);
  assert.equal(sandboxDenial(plain.status, plain.stderr), null);
  assert.equal(sandboxDenial(0, 'Read-only file system'), null, 'success is never a denial');
  // ...unless gate-sh ran it in a sandbox stricter than the turn's (a per-exec script): then a lost write counts
  assert.equal(sandboxDenial(0, 'touch: cannot touch x: Read-only file system', true)?.kind, 'read-only-fs');
  assert.equal(sandboxDenial(0, 'find: /root: Permission denied', true), null, 'after a 0 only a read-only file system');
  assert.equal(sandboxDenial(0, 'touch: cannot touch x: Read-only file system\ngate-sh: denied: rm x: no', true), null);
  assert.equal(sandboxDenial(127, 'x: Read-only file system', true), null);
  assert.equal(sandboxDenial(127, 'bash: x: Permission denied'), null);
  // the exec gate's own denial (EACCES) is a policy decision, not the sandbox's: never offered for a rerun
  const gated = "gate-sh: denied: rm -f x: Execution forbidden by policy\n./f.sh: line 1: /usr/bin/rm: Permission denied\n";
  assert.equal(sandboxDenial(126, gated), null);
  assert.equal(sandboxDenial(1, gated), null);
  assert.equal(sandboxDenial(1, 'cp: cannot create regular file: Permission denied')?.kind, 'permission');
  assert.equal(sandboxDenial(6, 'curl: (6) Could not resolve host: example.com')?.kind, 'network');
});

test('the sandbox step of a run plan: wraps per policy, leaves danger-full-access alone without needing bwrap', (t) => {
  const b = box();
  t.after(b.cleanup);
  const plan = {
    program: '/bin/bash',
    args: ['-c', 'echo "$0:$1"; touch /etc/x_$$ 2>/dev/null || echo ro', 'name', 'arg'],
    cwd: b.ws,
    env: b.env,
    fds: [] as number[],
  };
  const noBwrap = () => findBwrap({ PATH: '/nonexistent' }, []);
  const full = withSandbox(plan, { policy: { type: 'danger-full-access' }, env: b.env, bwrap: noBwrap });
  assert.equal(full.program, '/bin/bash');
  assert.equal(full.sandboxed, false);
  assert.throws(() => withSandbox(plan, { policy: workspaceWrite(), env: b.env, bwrap: noBwrap }), /bubblewrap \(bwrap\) is not installed/);
  const w = withSandbox(plan, { policy: workspaceWrite(), env: b.env, bwrap: () => BWRAP });
  assert.equal(w.program, BWRAP);
  assert.deepEqual(w.args.slice(w.args.indexOf('--')), ['--', '/bin/bash', ...plan.args]);
  assert.ok(w.args.includes('--new-session'));
  assert.ok(!withSandbox(plan, { policy: workspaceWrite(), env: b.env, bwrap: () => BWRAP, interactive: true }).args.includes('--new-session'));
  const r = spawnSync(w.program, w.args, { cwd: w.cwd, env: w.env, encoding: 'utf8' });
  assert.equal(r.stdout, 'name:arg\nro\n');
  assert.throws(
    () => withSandbox({ ...plan, cwd: join(b.dir, 'gone') }, { policy: workspaceWrite(), env: b.env, bwrap: () => BWRAP }),
    /the working folder '.*gone' does not exist/,
  );
});

test('the sandbox step follows an overall escalation: Unsandboxed as is, Permissions exactly the profile', (t) => {
  const b = box();
  t.after(b.cleanup);
  const plan = { program: '/bin/bash', args: ['-c', 'true'], cwd: b.ws };
  const un = withSandbox(plan, { policy: workspaceWrite(), execution: { type: 'Unsandboxed' }, env: b.env, bwrap: () => BWRAP });
  assert.equal(un.program, '/bin/bash');
  const pr = withSandbox(plan, { policy: workspaceWrite(), execution: { type: 'Permissions', profile: { network: true } }, env: b.env, bwrap: () => BWRAP });
  assert.ok(pr.sandboxed);
  assert.ok(!pr.args.includes('--unshare-net'), 'the profile asks for network');
  assert.equal(pr.args.filter((a) => a === b.ws).length, 1, 'the workspace is not writable under the profile: only --chdir names it');
  const td = withSandbox(plan, { policy: workspaceWrite(), execution: { type: 'TurnDefault' }, env: b.env, bwrap: () => BWRAP });
  assert.deepEqual(td.args, withSandbox(plan, { policy: workspaceWrite(), env: b.env, bwrap: () => BWRAP }).args);
});
