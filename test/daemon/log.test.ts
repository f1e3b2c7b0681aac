import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GATE, tempEnv } from '../helpers/env.js';
import { request } from '../../src/transport/client.js';
import { preflight, runGate } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

test('gate log: table, --json, --run, --decision, -n, --follow', async () => {
  const te = tempEnv();
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(join(te.env.GATE_HOME, 'rules', 'r.rules'), 'prefix_rule(pattern=["rm"], decision="forbidden")\n');
  const d = await startDaemon({ te, args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  const follow = spawn(process.execPath, [GATE, 'log', '--follow', '--json', '--decision', 'forbidden'], { env: te.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const followed: any[] = [];
  createInterface({ input: follow.stdout }).on('line', (l) => followed.push(JSON.parse(l)));
  try {
    const a = await preflight(d.paths, 'ls && rm -rf x');
    const b = await preflight(d.paths, 'echo hi');
    await request(d.paths, { type: 'run-finished', run_id: b.run_id, exit_status: 3, duration_ms: 12 });
    const all = await runGate(te.env, ['log', '--json']);
    const recs = all.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(recs.filter((r) => r.kind === 'decision').map((r) => [r.run_id, r.argv.join(' '), r.decision]), [
      [a.run_id, 'ls', 'allow'],
      [a.run_id, 'rm -rf x', 'forbidden'],
      [b.run_id, 'echo hi', 'allow'],
    ]);
    // every record carries its execution mode: Run runs in the turn sandbox; a denial has none
    assert.deepEqual(recs.filter((r) => r.kind === 'decision').map((r) => [r.action, r.execution ?? null, r.source]), [
      ['Run', 'TurnDefault', 'heuristic:approval-policy'],
      [recs.find((r) => r.decision === 'forbidden').action, null, `${join(te.env.GATE_HOME, 'rules', 'r.rules')}:1`],
      ['Run', 'TurnDefault', 'heuristic:approval-policy'],
    ]);
    const run = recs.find((r) => r.kind === 'run');
    assert.deepEqual([run.run_id, run.argv, run.cwd, run.exit_status, run.duration_ms], [b.run_id, ['bash', '-c', 'echo hi'], '/tmp', 3, 12]);
    const forb = await runGate(te.env, ['log', '--json', '--decision', 'forbidden']);
    assert.equal(forb.stdout.trim().split('\n').length, 1);
    assert.match(forb.stdout, /r\.rules:1/);
    const byRun = await runGate(te.env, ['log', '--run', b.run_id]);
    assert.equal(byRun.stdout.trim().split('\n').length, 2);
    assert.match(byRun.stdout, /exit 3 in 12 ms/);
    const last = await runGate(te.env, ['log', '-n', '1', '--json']);
    assert.equal(JSON.parse(last.stdout).kind, 'run');
    const table = await runGate(te.env, ['log']);
    assert.match(table.stdout, /decision  r-\S+ +forbidden +Deny\(.*r\.rules:1 +rm -rf x/);
    await waitFor(() => (followed.length >= 1 ? true : undefined), 'the followed record');
    await preflight(d.paths, 'rm -f y');
    await waitFor(() => (followed.length >= 2 ? true : undefined), 'a new record through --follow');
    assert.deepEqual(followed[1].argv, ['rm', '-f', 'y']);
  } finally {
    follow.kill();
    await d.stop();
    te.cleanup();
  }
});
