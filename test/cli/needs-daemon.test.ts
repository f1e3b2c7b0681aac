/**
 * `gate` commands that need the daemon start it as gate-sh does (src/cli/needs-daemon.ts): a real console
 * (`gate approve` on a terminal) opened before anything else attaches and waits, and a gate-sh run started
 * after it is answered there. GATE_NO_AUTOSTART=1 keeps the old refusal; `gate config set` starts one too.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, tempEnv } from '../helpers/env.js';
import { gatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { pty, runGate } from '../daemon/helpers.js';
import { gateSh } from '../shell/helpers.js';
import { killAll, waitFor } from '../helpers/daemon.js';

after(killAll);

/** A fresh home where autostart is on whatever the runner's environment says. */
function autostartEnv() {
  const te = tempEnv();
  delete te.env.GATE_NO_AUTOSTART;
  delete te.env.GATE_RUN;
  return te;
}

test('gate approve with no daemon starts one, attaches and waits; a later gate-sh run is answered on that console', { timeout: 120_000 }, async () => {
  const te = autostartEnv();
  mkdirSync(join(te.env.CODEX_HOME, 'rules'), { recursive: true });
  writeFileSync(join(te.env.CODEX_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["printf"], decision="prompt")\n');
  assert.equal(await pingDaemon(gatePaths(te.env), 300), undefined, 'no daemon before the console');
  const term = pty.spawn(process.execPath, [GATE, 'approve', '--name', 'first'], { name: 'xterm', cols: 200, rows: 40, cwd: te.dir, env: te.env });
  let screen = '';
  term.onData((x) => (screen += x));
  const exited = new Promise((r) => term.onExit(r));
  try {
    await waitFor(() => screen.includes("attached as 'first'") || undefined, `the console to attach (screen: ${screen})`, 60_000);
    assert.ok(await pingDaemon(gatePaths(te.env), 1000), 'the console started the daemon');
    const run = gateSh(['-c', 'printf "answered on the console\\n"'], { env: te.env, cwd: te.dir });
    await waitFor(() => screen.includes('command: printf') || undefined, `the prompt on the console (screen: ${screen})`, 30_000);
    term.write('a');
    const r = await run;
    assert.equal(r.stdout.toString(), 'answered on the console\n', r.stderr.toString());
    assert.equal(r.code, 0);
    await waitFor(() => screen.includes('approved by first') || undefined, `the resolution on the console (screen: ${screen})`);
  } finally {
    term.kill('SIGTERM');
    await exited;
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});

test('GATE_NO_AUTOSTART=1: gate approve and gate config set say no daemon runs and start none', { timeout: 60_000 }, async () => {
  const te = autostartEnv();
  te.env.GATE_NO_AUTOSTART = '1';
  try {
    const a = await runGate(te.env, ['approve', '--json']);
    assert.equal(a.code, 1);
    assert.match(a.stderr, /^gate: the gate daemon is not running for session 'default' .*start it with 'gate daemon start'\n$/);
    const c = await runGate(te.env, ['config', 'set', 'approval_policy', 'never']);
    assert.equal(c.code, 1);
    assert.match(c.stderr, /not running.*'gate daemon start'/);
    assert.equal(await pingDaemon(gatePaths(te.env), 300), undefined);
    assert.equal(existsSync(join(te.env.XDG_RUNTIME_DIR, 'gate-sh', 'default', 'daemon.pid')), false, 'no daemon was started');
  } finally {
    te.cleanup();
  }
});

test('gate config set with no daemon starts one and sets the key on it', { timeout: 60_000 }, async () => {
  const te = autostartEnv();
  try {
    const set = await runGate(te.env, ['config', 'set', 'approval_policy', 'never']);
    assert.equal(set.code, 0, set.stderr);
    assert.ok(await pingDaemon(gatePaths(te.env), 1000));
    const get = await runGate(te.env, ['config', 'get', 'approval_policy']);
    assert.equal(get.stdout, 'never\n');
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});
