import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync, writeFileSync, readFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv, ROOT } from '../helpers/env.js';
import { gatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { lockHeld, readOwner } from '../../src/client/lock.js';
import { runGate } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

test('start, status, stop; folders 0700, sockets 0600; a second daemon is refused', async () => {
  const te = tempEnv();
  try {
    const start = await runGate(te.env, ['daemon', 'start']);
    assert.equal(start.code, 0, start.stderr);
    assert.match(start.stdout, /gate daemon started \(pid \d+/);
    const p = gatePaths(te.env);
    for (const d of [p.sessionDir, p.requestDir, p.clientDir, p.approvalDir]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
    for (const s of [p.requestSock, p.streamSock, p.approvalSock]) {
      assert.ok(statSync(s).isSocket(), s);
      assert.equal(statSync(s).mode & 0o777, 0o600, s);
    }
    const again = await runGate(te.env, ['daemon', 'start']);
    assert.match(again.stdout, /already running/);
    const second = await runGate(te.env, ['daemon', 'run', '--no-terminal']);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /^gate: a gate daemon is already running for session 'default' \(pid \d+\)/);
    const st = await runGate(te.env, ['status', '--json']);
    assert.equal(st.code, 0, st.stderr);
    const s = JSON.parse(st.stdout);
    assert.equal(s.running, true);
    assert.equal(s.approval_policy, 'on-request');
    assert.equal(s.sandbox_policy.type, 'workspace-write');
    assert.deepEqual(s.approvers, []);
    assert.deepEqual(s.pending, []);
    // tempEnv's GATE_WARM_UP=1 reaches a daemon gate daemon start spawned: its one warm-up script, no more
    assert.deepEqual(s.warm_up, { done: 1, of: 1 });
    const badWarm = await runGate(te.env, ['daemon', 'run', '--no-terminal', '--warm-up', 'many']);
    assert.equal(badWarm.code, 1);
    assert.equal(badWarm.stderr, "gate: daemon run: --warm-up takes a whole number of scripts, not 'many'\n");
    const human = await runGate(te.env, ['status']);
    assert.match(human.stdout, /approvers: +none/);
    const stop = await runGate(te.env, ['daemon', 'stop']);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(await pingDaemon(p, 300), undefined);
    assert.equal(existsSync(p.requestSock), false);
    assert.equal(lockHeld(p.lockFile), false, 'the lock file stays (removing it would race), unlocked');
    const down = await runGate(te.env, ['status']);
    assert.equal(down.code, 3);
    assert.match(down.stderr, /not running.*gate daemon start/);
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});

test('a killed daemon leaves a stale lock and sockets; the next one replaces them', async () => {
  const d = await startDaemon();
  try {
    d.child.kill('SIGKILL');
    await new Promise((r) => d.child.once('exit', r));
    assert.ok(existsSync(d.paths.requestSock) && existsSync(d.paths.lockFile), 'stale files remain');
    assert.equal(await pingDaemon(d.paths, 300), undefined);
    const d2 = await startDaemon({ te: d.te });
    try {
      const info = await pingDaemon(d2.paths, 1000);
      assert.equal(info?.pid, d2.child.pid);
      assert.equal(readOwner(d2.paths.lockFile)?.pid, d2.child.pid);
    } finally {
      await d2.stop();
    }
  } finally {
    d.te.cleanup();
  }
});

test('ensureDaemon: autostart, races of many clients end with one daemon; GATE_NO_AUTOSTART and autostart=false refuse clearly', async () => {
  const te = tempEnv();
  const p = gatePaths(te.env);
  const script = `import('${join(ROOT, 'dist/src/client/autostart.js')}').then(m => m.ensureDaemon(process.env)).then(() => console.log('ok'), e => { console.log('ERR ' + e.message); process.exit(1); })`;
  const run = (env: Record<string, string>) =>
    new Promise<string>((resolve) => {
      const c = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      c.stdout.on('data', (x) => (out += x));
      c.on('exit', () => resolve(out.trim()));
    });
  const no = await run({ ...te.env, GATE_NO_AUTOSTART: '1' });
  assert.match(no, /^ERR the gate daemon is not running and GATE_NO_AUTOSTART=1; start it with 'gate daemon start'/);
  mkdirSync(te.env.GATE_HOME, { recursive: true });
  writeFileSync(join(te.env.GATE_HOME, 'config.toml'), 'autostart = false\n');
  try {
    const off = await run(te.env);
    assert.match(off, /^ERR the gate daemon is not running and autostart = false in .*config\.toml/);
    writeFileSync(join(te.env.GATE_HOME, 'config.toml'), 'autostart = true\n');
    const outs = await Promise.all(Array.from({ length: 6 }, () => run(te.env)));
    assert.deepEqual(outs, Array(6).fill('ok'));
    const info = await pingDaemon(p, 1000);
    assert.ok(info);
    assert.equal(readOwner(p.lockFile)?.pid, info.pid);
    // losers of the race said so in the log, and exactly one daemon announced itself ready
    const log = readFileSync(join(p.sessionDir, 'daemon.log'), 'utf8');
    assert.equal(log.match(/ready: session/g)?.length, 1, log);
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});

test('a daemon that cannot start reports why (bad config names file and key)', async () => {
  const te = tempEnv();
  try {
    mkdirSync(te.env.GATE_HOME, { recursive: true });
    writeFileSync(join(te.env.GATE_HOME, 'config.toml'), 'approval_policy = "sometimes"\n');
    const r = await runGate(te.env, ['daemon', 'start']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config\.toml: 'approval_policy': invalid approval policy "sometimes"/);
    await waitFor(async () => !(await pingDaemon(gatePaths(te.env), 200)), 'no daemon');
  } finally {
    te.cleanup();
  }
});
