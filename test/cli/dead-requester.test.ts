/**
 * Issue 32, finding 5: a prompt whose requester is gone (gate-sh killed while it waits for an answer) is
 * withdrawn at once, not left for the approval timeout to take the keys meant for live prompts; prompts are
 * numbered per session. Real daemon, real gate-sh (native and Node entries), a real `gate approve --json`.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { GATE, GATE_SH } from '../helpers/env.js';
import { daemonForTest, killAll, track, waitFor } from '../helpers/daemon.js';

after(killAll);

test('a requester killed while its prompt is pending: the prompt is withdrawn at once; the next prompt is #2 and is answered', { timeout: 120_000 }, async (t) => {
  const d = await daemonForTest(t, {
    env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_NO_AUTOSTART: '1', GATE_APPROVAL_TIMEOUT_MS: '120000' },
    rules: ['prefix_rule(pattern=["printf"], decision="prompt")'],
  });
  const events: Record<string, any>[] = [];
  const console_ = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'watcher'], { env: d.env, stdio: ['pipe', 'pipe', 'pipe'] }));
  t.after(() => void console_.kill());
  createInterface({ input: console_.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
  await waitFor(() => events.some((e) => e.type === 'attached'), 'the console to attach');
  let n = 0;
  for (const entry of [{ name: 'native', env: {} }, { name: 'node', env: { GATE_SH_NODE: '1' } }]) {
    const g = track(spawn(GATE_SH, ['-c', `printf 'never %s\\n' ${entry.name}`], { env: { ...d.env, ...entry.env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    const prompt = await waitFor(() => events.find((e) => e.type === 'prompt' && e.display.includes(entry.name)), `${entry.name}: the prompt`);
    assert.equal(prompt.number, ++n, `${entry.name}: prompts are numbered per session`);
    const killedAt = Date.now();
    g.kill('SIGKILL');
    const resolved = await waitFor(
      () => events.find((e) => e.type === 'resolved' && e.approval_id === prompt.approval_id),
      `${entry.name}: the prompt to be withdrawn`,
      10_000,
    );
    assert.match(resolved.note, /the requester is gone/);
    assert.ok(Date.now() - killedAt < 5_000, `${entry.name}: withdrawn within seconds, not after the 120 s timeout`);
    const st = JSON.parse(spawnSync(process.execPath, [GATE, 'status', '--json'], { env: d.env, encoding: 'utf8' }).stdout);
    assert.deepEqual(st.pending, [], `${entry.name}: gate status shows no dead prompt`);
  }
  // a live requester's prompt: the next number, answered on the console, and the command runs
  const live = track(spawn(GATE_SH, ['-c', "printf 'answered\\n'"], { env: d.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  live.stdout!.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((r) => live.on('exit', r));
  const prompt = await waitFor(() => events.find((e) => e.type === 'prompt' && e.display.includes('answered')), 'the live prompt');
  assert.equal(prompt.number, n + 1);
  console_.stdin!.write(JSON.stringify({ approval_id: prompt.approval_id, decision: 'approved' }) + '\n');
  assert.equal(await exited, 0);
  assert.equal(out, 'answered\n');
});
