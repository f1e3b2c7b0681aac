/** Signals sent to gate-sh reach the script as they reach bash; exit statuses match. Real daemon, real bash. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { bash, gateSh, pool, status, type Ran, SHELL_DAEMON } from './helpers.js';
import { daemonForFile } from '../helpers/daemon.js';

const daemon = daemonForFile(SHELL_DAEMON);

/** Send `sig` once the script has printed "ready". */
function killWhenReady(sig: NodeJS.Signals): (c: ChildProcess) => void {
  return (c) => {
    let seen = '';
    c.stdout!.on('data', (b: Buffer) => {
      if (seen.includes('ready')) return;
      seen += b.toString();
      if (seen.includes('ready')) c.kill(sig);
    });
  };
}

const LOOP = 'echo ready; while :; do sleep 0.05; done';

test('SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 sent to gate-sh reach the script (trap runs, status kept)', { timeout: 120_000 }, async () => {
  const sigs: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
  const env = { ...daemon.d.te.env, GATE_NO_AUTOSTART: '1' };
  const results = await pool(sigs, 2, async (sig): Promise<[NodeJS.Signals, Ran, Ran]> => {
    const name = sig.slice(3);
    const script = `trap 'echo got-${name}; exit 42' ${name}; ${LOOP}`;
    const b = await bash(['-c', script], { env, onSpawn: killWhenReady(sig) });
    const g = await gateSh(['-c', script], { env, onSpawn: killWhenReady(sig) });
    return [sig, b, g];
  });
  for (const [sig, b, g] of results) {
    assert.equal(b.stdout.toString(), `ready\ngot-${sig.slice(3)}\n`, `bash, ${sig}`);
    assert.equal(g.stdout.toString(), b.stdout.toString(), `gate-sh, ${sig}: ${g.stderr}`);
    assert.equal(status(g), 42, `gate-sh, ${sig}`);
  }
});

test('an untrapped SIGTERM ends the script: 143 like bash, and nothing after it runs', { timeout: 60_000 }, async () => {
  const env = { ...daemon.d.te.env, GATE_NO_AUTOSTART: '1' };
  const script = 'echo ready; sleep 3; echo after';
  const b = await bash(['-c', script], { env, onSpawn: killWhenReady('SIGTERM') });
  const g = await gateSh(['-c', script], { env, onSpawn: killWhenReady('SIGTERM') });
  assert.equal(status(b), 143);
  assert.equal(status(g), 143);
  assert.equal(g.stdout.toString(), 'ready\n');
  assert.ok(g.exitMs < 2500, `gate-sh exited after ${g.exitMs} ms: the signal did not reach bash`);
});
