/**
 * One daemon whatever namespace, sandbox or environment the caller runs in: the session lock is held by the
 * kernel (never judged stale from another PID namespace), `gate daemon stop` finds a running daemon, and a
 * caller that cannot reach the daemon's socket is told so at once (exit 126, nothing runs).
 * Real daemons, real sockets, real unshare (root here).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATE_SH, tempEnv } from '../helpers/env.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { lockHeld, readOwner } from '../../src/client/lock.js';
import { approveConsole, denySocketsFilter, LANDLOCK, runGate } from './helpers.js';
import { mcpSession } from '../integrations/helpers.js';
import { gatePaths } from '../../src/paths/paths.js';
import { run } from '../shell/helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

after(killAll);

const PIDNS = ['unshare', '--pid', '--fork', '--mount-proc'];

test('a daemon started in a private PID namespace next to a live one leaves it alone; gate daemon stop finds it from there', async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
  try {
    const before = [d.paths.requestSock, d.paths.streamSock, d.paths.approvalSock].map((p) => statSync(p).ino);
    // From inside its own PID namespace the live daemon's pid names nothing (or someone else): the lock
    // must still be seen as held.
    const second = await runGate(d.te.env, ['daemon', 'run', '--no-terminal'], '', PIDNS);
    assert.equal(second.code, 1, second.stderr);
    assert.match(
      second.stderr,
      new RegExp(`already running for session 'default' \\(pid ${d.child.pid} in another PID namespace, ${regexEscape(readlinkSync('/proc/self/ns/pid'))}\\)`),
    );
    assert.deepEqual(
      [d.paths.requestSock, d.paths.streamSock, d.paths.approvalSock].map((p) => statSync(p).ino),
      before,
      'sockets untouched',
    );
    assert.equal((await pingDaemon(d.paths, 2000))?.pid, d.child.pid, 'the live daemon still answers');
    assert.equal(readOwner(d.paths.lockFile)?.pid, d.child.pid);

    // gate-sh from that namespace uses the live daemon (its ping reports the same pid), and runs
    const sh = await run(PIDNS[0], [...PIDNS.slice(1), GATE_SH, '-c', 'echo through'], { env: d.te.env });
    assert.equal(sh.code, 0, sh.stderr.toString());
    assert.equal(sh.stdout.toString(), 'through\n');

    const stop = await runGate(d.te.env, ['daemon', 'stop'], '', PIDNS);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`gate daemon stopped \\(pid ${d.child.pid}\\)`));
    await new Promise((r) => (d.child.exitCode !== null ? r(null) : d.child.once('exit', r)));
    assert.equal(lockHeld(d.paths.lockFile), false);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('a daemon whose sockets were removed is still found by gate daemon stop: by pid in its PID namespace, explained from another', async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
  try {
    unlinkSync(d.paths.streamSock);
    unlinkSync(d.paths.requestSock);
    const status = await runGate(d.te.env, ['daemon', 'stop'], '', PIDNS);
    assert.equal(status.code, 1);
    assert.match(
      status.stderr,
      new RegExp(
        `holds the session lock .* \\(pid ${d.child.pid} in PID namespace pid:\\[\\d+\\], this process is in pid:\\[\\d+\\]\\).*cannot be stopped from here`,
      ),
    );
    assert.equal(d.child.exitCode, null, 'still running');
    const viaApproval = await runGate(d.te.env, ['daemon', 'status', '--json']);
    assert.equal(JSON.parse(viaApproval.stdout).pid, d.child.pid, 'status asks over the approval socket, still there');
    unlinkSync(d.paths.approvalSock);
    const st = await runGate(d.te.env, ['daemon', 'status']);
    assert.equal(st.code, 3);
    assert.match(
      st.stderr,
      new RegExp(`cannot reach the gate daemon from here: a gate daemon holds the session lock .* \\(pid ${d.child.pid}\\) but its socket .* gives ENOENT`),
    );
    // gate-sh meanwhile fails at once rather than starting a second daemon next to it
    const sh = await run(GATE_SH, ['-c', 'echo never'], { env: d.te.env });
    assert.equal(sh.code, 126);
    assert.equal(sh.stdout.toString(), '');
    assert.match(sh.stderr.toString(), /cannot reach the gate daemon from here: a gate daemon holds the session lock .* gives ENOENT.*nothing ran/s);
    const stop = await runGate(d.te.env, ['daemon', 'stop']);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`gate daemon stopped \\(pid ${d.child.pid}; it held the session lock without answering`));
    await new Promise((r) => (d.child.exitCode !== null ? r(null) : d.child.once('exit', r)));
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('gate-sh inside a sandbox that forbids or hides the socket fails at once, says why, exit 126, nothing runs; the same command runs where it can reach the daemon', async () => {
  const d = await startDaemon({ te: tempEnv({}, { runtimeInside: true }), env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
  try {
    const marker = join(d.te.dir, 'ran');
    const script = `touch ${marker}; echo ran`;
    const BWRAP = ['bwrap', '--bind', '/', '/', '--dev-bind', '/dev', '/dev'];
    const filterFile = join(d.te.dir, 'deny-sockets.bpf');
    writeFileSync(filterFile, denySocketsFilter());

    // seccomp (as Codex's sandbox): the reply socket's bind is refused with EPERM
    const fd = openSync(filterFile, 'r');
    const denied = await run(BWRAP[0], [...BWRAP.slice(1), '--seccomp', '3', GATE_SH, '-c', script], { env: d.te.env, stdio: ['pipe', 'pipe', 'pipe', fd] });
    closeSync(fd);
    assert.equal(denied.code, 126, denied.stderr.toString());
    assert.equal(denied.stdout.toString(), '');
    assert.match(
      denied.stderr.toString(),
      /^gate-sh: cannot reach the gate daemon from here: binding a reply socket in .* is refused with EPERM \(this process runs under a seccomp filter\)\. .*another sandbox.*Turn the agent's own sandbox off.*'gate mcp'.*; nothing ran\n$/s,
    );
    assert.equal(existsSync(marker), false);

    // bubblewrap without the runtime folder (a tmpfs over it): the folder does not exist in there
    const hidden = await run(BWRAP[0], [...BWRAP.slice(1), '--tmpfs', d.te.dir, GATE_SH, '-c', script], { env: d.te.env });
    assert.equal(hidden.code, 126, hidden.stderr.toString());
    assert.match(
      hidden.stderr.toString(),
      new RegExp(
        `cannot reach the gate daemon from here: the runtime folder ${d.te.env.XDG_RUNTIME_DIR} \\(XDG_RUNTIME_DIR\\) does not exist here\\..*nothing ran`,
        's',
      ),
    );
    assert.equal(existsSync(marker), false);

    // Landlock (Codex's other Linux sandbox): writes only in the workspace, so no reply socket can be made
    // in the runtime folder; connect by path is not guarded, so the daemon's socket itself answers.
    const work = join(d.te.dir, 'w');
    mkdirSync(work);
    const landlocked = await run(LANDLOCK[0], [LANDLOCK[1], `${work}:/dev`, GATE_SH, '-c', script], { env: d.te.env, cwd: work });
    assert.equal(landlocked.code, 126, landlocked.stderr.toString());
    assert.match(
      landlocked.stderr.toString(),
      /^gate-sh: cannot reach the gate daemon from here: binding a reply socket in .* is refused with EACCES\. .*another sandbox.*; nothing ran\n$/s,
    );
    assert.equal(existsSync(marker), false);
    const landlockAllowed = await run(LANDLOCK[0], [LANDLOCK[1], `${work}:/dev:${d.te.env.XDG_RUNTIME_DIR}:${d.te.dir}`, GATE_SH, '-c', script], {
      env: d.te.env,
      cwd: work,
    });
    // the daemon is reached; the run itself is refused: under danger-full-access the gate's guard keeps
    // gate-sh's own state out of the run's reach with mounts, which a Landlock domain forbids (issue 28
    // point 4: fail closed, and say why)
    assert.equal(landlockAllowed.code, 126, landlockAllowed.stderr.toString());
    assert.match(landlockAllowed.stderr.toString(), /the gate's guard: another sandbox \(Landlock\?\) forbids the mounts/);
    assert.equal(existsSync(marker), false);

    assert.equal((await pingDaemon(d.paths, 2000))?.pid, d.child.pid, 'the daemon was left alone');
    assert.equal(existsSync(join(d.paths.sessionDir, 'daemon.log')), false, 'no daemon was started in their place');

    // A private network namespace does not separate unix sockets bound at a path: gate-sh reaches the daemon.
    const net = await run('unshare', ['--net', GATE_SH, '-c', 'echo net'], { env: d.te.env });
    assert.equal(net.code, 0, net.stderr.toString());
    assert.equal(net.stdout.toString(), 'net\n');
    // The same bubblewrap with the socket reachable runs the command.
    const allowed = await run(BWRAP[0], [...BWRAP.slice(1), GATE_SH, '-c', script], { env: d.te.env });
    assert.equal(allowed.code, 0, allowed.stderr.toString());
    assert.equal(allowed.stdout.toString(), 'ran\n');
    assert.equal(existsSync(marker), true);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('gate-sh, gate approve, gate mcp and gate status started with env -i (no XDG_RUNTIME_DIR) and a differently spelled HOME find the same daemon', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'g-'));
  const home = join(dir, 'h');
  mkdirSync(join(home, '.gate-sh'), { recursive: true });
  writeFileSync(join(home, '.gate-sh', 'config.toml'), 'sandbox_mode = "danger-full-access"\n');
  symlinkSync(home, join(dir, 'l'));
  // The runtime folder is derived from the uid here (shared by this user's sessions): a session of our own.
  const session = `t${process.pid.toString(36)}-${Date.now().toString(36)}`;
  const full: Record<string, string> = { ...(process.env as Record<string, string>), HOME: home, GATE_SESSION: session };
  for (const k of ['XDG_RUNTIME_DIR', 'GATE_HOME', 'CODEX_HOME', 'GATE_SANDBOX_MODE', 'GATE_APPROVAL_POLICY']) delete full[k];
  const reduced: Record<string, string> = { HOME: join(dir, 'l') + '/', PATH: process.env.PATH ?? '/usr/bin:/bin', GATE_SESSION: session };
  const d = await startDaemon({ te: { dir, env: full, cleanup: () => rmSync(dir, { recursive: true, force: true }) } });
  try {
    assert.deepEqual(gatePaths(reduced), d.paths);
    const st = await runGate(reduced, ['status', '--json']);
    assert.equal(st.code, 0, st.stderr);
    assert.equal(JSON.parse(st.stdout).pid, d.child.pid);

    const sh = await run(GATE_SH, ['-c', 'echo reduced-env'], { env: reduced, cwd: dir });
    assert.equal(sh.code, 0, sh.stderr.toString());
    assert.equal(sh.stdout.toString(), 'reduced-env\n');

    const console = await approveConsole(reduced, 'reduced-console');
    const mcp = await mcpSession(reduced, { elicitation: true });
    try {
      const r = await mcp.shell({ command: 'echo via-mcp', workdir: dir });
      assert.equal(r.output.trim(), 'via-mcp', mcp.stderr());
      const status = JSON.parse((await runGate(full, ['status', '--json'])).stdout);
      const names = [...(status.approvers as string[])].sort();
      assert.equal(names.length, 2, JSON.stringify(status.approvers));
      assert.equal(names[1], 'reduced-console');
      assert.match(names[0], /^mcp-\d+$/);
    } finally {
      await mcp.close();
      await console.close();
    }
    const audit = readFileSync(join(home, '.gate-sh', 'audit.jsonl'), 'utf8');
    assert.match(audit, /echo reduced-env/);
    assert.match(audit, /echo via-mcp/);
    assert.equal((await pingDaemon(d.paths, 2000))?.pid, d.child.pid);
    assert.equal(existsSync(join(d.paths.sessionDir, 'daemon.log')), false, 'nobody started a second daemon');
  } finally {
    await d.stop();
    rmSync(d.paths.sessionDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no daemon, and a sandbox where none can start (Landlock: no writes in the runtime folder): gate-sh says so at once, exit 126; with the folder writable it starts one and runs', async () => {
  const te = tempEnv({ GATE_SANDBOX_MODE: 'danger-full-access' }, { runtimeInside: true });
  try {
    const work = join(te.dir, 'w');
    mkdirSync(work);
    const r = await run(LANDLOCK[0], [LANDLOCK[1], `${work}:/dev`, GATE_SH, '-c', 'echo never'], { env: te.env, cwd: work });
    assert.equal(r.code, 126, r.stderr.toString());
    assert.equal(r.stdout.toString(), '');
    assert.match(
      r.stderr.toString(),
      /^gate-sh: cannot reach the gate daemon from here: no gate daemon answers, and one cannot start here either \(.*EACCES: permission denied, mkdir .*\)\. .*another sandbox.*; nothing ran\n$/s,
    );
    const ok = await run(LANDLOCK[0], [LANDLOCK[1], `${work}:/dev:${te.dir}`, GATE_SH, '-c', 'echo started'], { env: te.env, cwd: work });
    // the daemon starts there; the run is refused, as above: its guard cannot be built under Landlock
    assert.equal(ok.code, 126, ok.stderr.toString());
    assert.equal(ok.stdout.toString(), '');
    assert.match(ok.stderr.toString(), /the gate's guard: another sandbox \(Landlock\?\) forbids the mounts/);
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});

function regexEscape(s: string): string {
  return s.replace(/[[\]()]/g, '\\$&');
}
