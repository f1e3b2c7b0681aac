/**
 * Issue 30, "a key to see all": a prompt whose command is too long to show whole is shown as its head and
 * tail with its length, and `gate approve` offers [v], which prints every character of it (escaped as in the
 * prompt) before the answer is given. Real daemon (untrusted), real `gate approve` console on a pipe (its
 * line mode), real gate-sh; the command runs once approved. A short command's prompt offers no [v].
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { daemonForTest, killAll, track, waitFor } from '../helpers/daemon.js';

test('gate approve: [v] shows a cut command whole, then the answer runs it; a short command offers no [v]', { timeout: 120_000 }, async (t) => {
  t.after(killAll);
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'untrusted', GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });
  const console_ = track(spawn(process.execPath, [GATE, 'approve'], { env: d.env, stdio: ['pipe', 'pipe', 'pipe'] }));
  let seen = '';
  // once on, every prompt shown is approved as it arrives (untrusted asks again at exec time)
  let approveAll = false;
  let answered = 0;
  console_.stderr!.on('data', (b) => {
    seen += b;
    if (!approveAll) return;
    for (const shown = seen.split('── approval').length - 1; answered < shown; answered++) console_.stdin!.write('a\n');
  });
  await waitFor(() => seen.includes('waiting for prompts') || undefined, 'gate approve to attach');
  // the middle of the command is where a long one is cut: the word that matters sits there
  const middle = 'MIDDLE-WORD-ONLY-IN-THE-WHOLE-VIEW';
  const long = `python3 -c 'open("done", "w").close()' ${'a'.repeat(1500)} ${middle} ${'b'.repeat(1500)}`;
  const ran = run(GATE_SH, ['-c', long], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  await waitFor(() => seen.includes("[v] view the whole command") || undefined, "the prompt with its view key");
  assert.ok(!seen.includes(middle), `the prompt itself shows the command cut: ${seen.replace(/a{50,}|b{50,}/g, (m) => `<${m.length}>`)}`);
  assert.match(seen, /\d+ characters/);
  const before = seen.length;
  console_.stdin!.write('v\n');
  await waitFor(() => seen.slice(before).includes('(end of the command)') || undefined, 'the whole command');
  assert.ok(seen.slice(before).includes(`${'a'.repeat(1500)} ${middle} ${'b'.repeat(1500)}`), 'every character of the command is shown');
  answered = seen.split('── approval').length - 2;
  approveAll = true;
  console_.stdin!.write('a\n');
  answered++;
  const r = await ran;
  approveAll = false;
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(join(d.ws, 'done')), 'the approved command ran');
  // a short command: shown whole, no view key
  const mark = seen.length;
  const short = run(GATE_SH, ['-c', 'touch short'], { env: d.env, cwd: d.ws });
  await waitFor(() => seen.slice(mark).includes('[a] approve') || undefined, 'the short prompt');
  assert.ok(!seen.slice(mark).includes('[v]'), seen.slice(mark));
  answered = seen.split('── approval').length - 2;
  approveAll = true;
  console_.stdin!.write('a\n');
  answered++;
  assert.equal((await short).code, 0);
  console_.kill();
});
