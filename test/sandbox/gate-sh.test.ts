// gate-sh end to end under the turn sandbox: real daemon (workspace-write), real gate-sh, bash, bubblewrap,
// exec gate and escalation runner.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { GATE_SH } from '../helpers/env.js';
import { gateSh, run, execGateOptions } from '../exec-gate/helpers.js';
import { GATE_INSTALL_ROOT } from '../../src/sandbox/gate-context.js';
import { type DaemonProc, daemonForTest, startDaemon, waitFor } from '../helpers/daemon.js';

// Temp folders live under /tmp, which workspace-write makes writable: "outside" is under /var/tmp.
let outside: string;
let rig: DaemonProc;
before(async () => {
  outside = mkdtempSync('/var/tmp/gate-out-');
  rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["cp"], decision="allow")'], env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  mkdirSync(join(rig.ws, '.git'));
  writeFileSync(join(rig.ws, '.git', 'config'), '[core]\n');
});
after(async () => {
  await rig.close();
  rmSync(outside, { recursive: true, force: true });
});

test('a gated script runs in the turn sandbox: the workspace is writable, .git and the rest are not', async () => {
  const r = await gateSh(rig, `echo in > f && echo ok; echo out > ${outside}/f; echo evil >> .git/config; exit 3`);
  assert.equal(r.stdout, 'ok\n', r.stderr);
  assert.equal(r.code, 3);
  assert.equal(r.stderr.match(/: Read-only file system\n/g)?.length, 2, r.stderr);
  // the on-failure rerun is offered, but no approver is attached: the failure stands, and says how to get one
  assert.match(
    r.stderr,
    /gate-sh: the sandboxed run failed \(read-only file system in the sandbox: .*\); not rerun: .*no approver is attached \(run 'gate approve'\)(: [^\n]*)?\n$/,
  );
  assert.equal(readFileSync(join(rig.ws, 'f'), 'utf8'), 'in\n');
  assert.ok(!existsSync(join(outside, 'f')));
  assert.equal(readFileSync(join(rig.ws, '.git', 'config'), 'utf8'), '[core]\n');
});

test("gate-sh's installation stays read-only inside the sandbox, also when it lies inside a writable root", async () => {
  // TMPDIR is a writable root of workspace-write: pointing it at the installation makes the whole checkout
  // writable but for what runs outside the sandbox (a checkout under /tmp, or gate-sh developed in its workspace)
  const probe = `probe-${process.pid}`;
  const script = `echo a > ${GATE_INSTALL_ROOT}/${probe} && echo root-ok; for d in dist bin shims node_modules; do echo b > ${GATE_INSTALL_ROOT}/$d/${probe} 2>/dev/null || echo "$d read-only"; done; echo c >> ${GATE_INSTALL_ROOT}/dist/src/cli/gate-sh.js 2>/dev/null || echo gate-sh.js read-only`;
  try {
    const r = await run(GATE_SH, ['-c', script], { env: { ...rig.env, TMPDIR: GATE_INSTALL_ROOT }, cwd: rig.ws });
    assert.equal(r.stdout, 'root-ok\ndist read-only\nbin read-only\nshims read-only\nnode_modules read-only\ngate-sh.js read-only\n', r.stderr);
    assert.equal(readFileSync(join(GATE_INSTALL_ROOT, probe), 'utf8'), 'a\n', 'the rest of the writable root is writable');
    for (const d of ['dist', 'bin', 'shims', 'node_modules']) assert.ok(!existsSync(join(GATE_INSTALL_ROOT, d, probe)), d);
  } finally {
    rmSync(join(GATE_INSTALL_ROOT, probe), { force: true });
  }
});

test('the approval socket is invisible to a gated script (a socket on a read-only mount could still be connected to)', async () => {
  // `cat` on a socket: ENXIO when it is there, ENOENT when hidden (turn.test.ts connects for real)
  const probe = `cat ${rig.paths.approvalSock}; ls ${rig.paths.sessionDir}`;
  const outsideRun = await run('/bin/bash', ['-c', probe], { env: rig.env, cwd: rig.ws });
  assert.match(outsideRun.stderr, /No such device or address/);
  const r = await gateSh(rig, probe);
  assert.match(r.stderr, /approval\.sock: No such file or directory/);
  assert.equal(r.stdout, 'req\n', 'only the request folder is visible in the session folder');
});

test('escalation: a script whose every command is explicitly allowed runs outside the sandbox; a mixed one stays inside, but for the allowed command, which leaves it at its exec', async () => {
  const r = await gateSh(rig, `cp /etc/hostname ${outside}/esc`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(join(outside, 'esc'), 'utf8'), readFileSync('/etc/hostname', 'utf8'));
  const m = await gateSh(rig, `echo start; echo x > ${outside}/direct; cp /etc/hostname ${outside}/mixed`);
  assert.equal(m.stdout, 'start\n');
  assert.match(m.stderr, /direct: Read-only file system/);
  assert.ok(!existsSync(join(outside, 'direct')));
  assert.equal(readFileSync(join(outside, 'mixed'), 'utf8'), readFileSync('/etc/hostname', 'utf8'), m.stderr);
});

test('signals sent to gate-sh reach the sandboxed script: traps run, untrapped SIGTERM is 143', { timeout: 60_000 }, async () => {
  for (const [script, want, status] of [
    [`trap 'echo got-TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done`, 'ready\ngot-TERM\n', 42],
    [`echo ready; while :; do sleep 0.05; done; echo after`, 'ready\n', 143],
  ] as const) {
    const c = spawn(GATE_SH, ['-c', script], { env: rig.env, cwd: rig.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    await waitFor(() => out.includes('ready'), 'the script to start');
    c.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, string | null]>((res) => c.on('exit', (a, b) => res([a, b])));
    assert.equal(out, want);
    assert.equal(code ?? (signal === 'SIGTERM' ? 143 : -1), status);
  }
});

test('bad input: a configured writable root that does not exist → a clear error, exit 126, nothing ran', async (t) => {
  const { te, ws } = await daemonForTest(t, {
    config: 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nwritable_roots = ["/nonexistent/gate-root"]\n',
    workspace: 'ws',
    env: { GATE_NO_AUTOSTART: '1' },
  });
  const r = await run(GATE_SH, ['-c', 'touch ran'], { env: te.env, cwd: ws });
  assert.equal(r.code, 126);
  assert.match(r.stderr, /^gate-sh: writable root '\/nonexistent\/gate-root' does not exist or is not a folder; nothing ran\n$/);
  assert.ok(!existsSync(join(ws, 'ran')));
});
