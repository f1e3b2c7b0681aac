/**
 * Issue 32, finding 4: a daemon's life is visible. `gate daemon stop` during a run is refused, naming the
 * run and --force; with --force the daemon stops and each run's gate-sh (native and Node) says on stderr
 * why it ended. `gate daemon restart` and `gate reload` exist; a stop with nothing running just stops.
 * Real daemon (workspace-write: the runs are in its session sandbox), real gate-sh.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH } from '../helpers/env.js';
import { daemonForTest, killAll, track, waitFor } from '../helpers/daemon.js';
import { pingDaemon } from '../../src/transport/ping.js';

after(killAll);

function gate(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [GATE, ...args], { env, encoding: 'utf8' });
}

test('gate daemon stop during a run: refused; --force ends it and each gate-sh says why; restart and reload', { timeout: 180_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' }, workspace: 'ws', rules: [] });
  const runs = [{ name: 'native', env: {} }, { name: 'node', env: { GATE_SH_NODE: '1' } }].map((entry) => {
    const c = track(spawn(GATE_SH, ['-c', `echo started-${entry.name}; sleep 120; echo never`], { env: { ...d.env, ...entry.env }, cwd: d.ws }));
    const r = { name: entry.name, out: '', err: '', code: undefined as number | null | undefined };
    c.stdout!.on('data', (b) => (r.out += b));
    c.stderr!.on('data', (b) => (r.err += b));
    const done = new Promise<void>((resolve) => c.on('exit', (code, sig) => ((r.code = code ?? (sig ? 128 : null)), resolve())));
    return { r, done };
  });
  await waitFor(() => runs.every(({ r }) => r.out.includes('started-')) || undefined, 'both runs to start');
  const refused = gate(['daemon', 'stop'], d.env);
  assert.equal(refused.status, 1, refused.stderr);
  assert.match(refused.stderr, /^gate: daemon stop: 2 runs are active \(gate-sh pid \d+: echo started-/);
  assert.match(refused.stderr, /'gate daemon stop --force'/);
  assert.ok(await pingDaemon(d.paths, 1000), 'the daemon still runs');
  assert.ok(runs.every(({ r }) => r.code === undefined), 'the runs go on');
  const forced = gate(['daemon', 'stop', '--force'], d.env);
  assert.equal(forced.status, 0, forced.stderr);
  await Promise.all(runs.map((x) => x.done));
  for (const { r } of runs) {
    assert.notEqual(r.code, 0, r.name);
    assert.doesNotMatch(r.out, /never/, r.name);
    assert.match(r.err, /gate-sh: the gate daemon was stopped \('gate daemon stop --force' by [^)]+\) while this ran; the run was ended/, `${r.name}: ${r.err}`);
  }
  // restart with nothing running: starts one; reload names a broken file, then reloads a fixed one
  const restarted = gate(['daemon', 'restart'], d.env);
  assert.equal(restarted.status, 0, restarted.stderr);
  assert.match(restarted.stdout, /gate daemon started \(pid \d+/);
  const rules = join(d.env.GATE_HOME, 'rules', 'default.rules');
  writeFileSync(rules, 'prefix_rule(pattern=["ls" decision="allow")\n');
  const broken = gate(['reload'], d.env);
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, new RegExp(`^gate: reload: ${rules.replace(/[.]/g, '\\.')}:1:\\d+: `));
  writeFileSync(rules, 'prefix_rule(pattern=["ls"], decision="allow")\n');
  const ok = gate(['reload'], d.env);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^reloaded 1 rule file\(s\): .*default\.rules/);
  const again = gate(['daemon', 'restart'], d.env);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /gate daemon stopped \(pid \d+\)\ngate daemon started/);
  const stopped = gate(['daemon', 'stop'], d.env);
  assert.equal(stopped.status, 0, stopped.stderr);
});
