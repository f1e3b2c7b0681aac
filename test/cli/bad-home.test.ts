/**
 * Issue 32, finding 6: an unusable GATE_HOME fails fast with what is wrong with the folder (relative, not a
 * folder, on a pseudo filesystem like /proc or /sys, not writable): gate-sh exits 126 at once, a daemon
 * started with it exits by itself (no hang, no spinning daemon), and nothing is created in the cwd. A good
 * GATE_HOME in the same environment runs. Real gate-sh (autostart on), real `gate daemon run`.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, tempEnv } from '../helpers/env.js';
import { killAll, track } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';

after(killAll);

/** `gate daemon run` with this environment: its exit code and output, or 'running' after ms. */
function daemonRun(env: Record<string, string>, ms: number): Promise<{ code: number | null; out: string } | 'running'> {
  return new Promise((resolve) => {
    const c = track(spawn(process.execPath, [GATE, 'daemon', 'run', '--no-terminal'], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    c.stderr!.on('data', (d) => (out += d));
    const timer = setTimeout(() => (c.kill('SIGKILL'), resolve('running')), ms);
    c.on('exit', (code) => (clearTimeout(timer), resolve({ code, out })));
  });
}

test('each bad GATE_HOME is named at once: relative, a file, below a file, /proc, /sys, unwritable', { timeout: 180_000 }, async (t) => {
  const te = tempEnv();
  t.after(() => te.cleanup());
  delete te.env.GATE_NO_AUTOSTART;
  delete te.env.GATE_RUN;
  delete te.env.GATE_SANDBOX_MODE;
  delete te.env.GATE_APPROVAL_POLICY;
  const file = join(te.dir, 'a-file');
  writeFileSync(file, 'not a folder\n');
  const cases: [string, string, RegExp][] = [
    ['relative', 'gh-rel', /GATE_HOME=gh-rel is a relative path: set it to an absolute folder/],
    ['a file', file, /is not a folder/],
    ['below a file', join(file, 'gh'), /a-file, above it, is not a folder/],
    ['/proc', '/proc/gh', /GATE_HOME=\/proc\/gh cannot be used: \/proc is on the proc pseudo filesystem/],
    ['/sys', '/sys/gh', /GATE_HOME=\/sys\/gh cannot be used: \/sys is on the sysfs pseudo filesystem/],
  ];
  if (process.getuid?.() !== 0) {
    // root may write anywhere a mode says not to: this case is for everyone else
    const locked = join(te.dir, 'locked');
    mkdirSync(locked, { mode: 0o500 });
    cases.push(['unwritable', join(locked, 'gh'), /locked, where it would be created, is not writable/]);
  }
  for (const [what, home, message] of cases) {
    const env = { ...te.env, GATE_HOME: home, GATE_SESSION: 'badhome' };
    const started = Date.now();
    const r = await gateSh(['-c', 'echo ran'], { env, cwd: te.dir });
    const ms = Date.now() - started;
    assert.equal(r.code, 126, `${what}: ${r.stderr}`);
    assert.equal(r.stdout.toString(), '', what);
    assert.match(r.stderr.toString(), message, what);
    assert.ok(ms < 15_000, `${what}: answered in ${ms} ms, not after a 30 s wait`);
    // a daemon started with it says the same and exits by itself
    const d = await daemonRun(env, 15_000);
    assert.notEqual(d, 'running', `${what}: the daemon must not stay (spinning) with a bad home`);
    if (d !== 'running') {
      assert.notEqual(d.code, 0, what);
      assert.match(d.out, message, what);
    }
  }
  assert.ok(!existsSync(join(te.dir, 'gh-rel')), 'a relative GATE_HOME is not created in the cwd');
  // the same environment with a good home runs
  const good = await gateSh(['-c', 'echo ran'], { env: { ...te.env, GATE_HOME: join(te.dir, 'gh'), GATE_SESSION: 'goodhome' }, cwd: te.dir });
  assert.equal(good.stdout.toString(), 'ran\n', good.stderr.toString());
  await new Promise<void>((resolve) => {
    const s = spawn(process.execPath, [GATE, 'daemon', 'stop'], { env: { ...te.env, GATE_HOME: join(te.dir, 'gh'), GATE_SESSION: 'goodhome' } });
    s.on('exit', () => resolve());
  });
});
