/**
 * Completeness through the PTY paths: `seq 1 200000` a hundred times, every byte every time
 * (node-pty alone loses the tail of quickly exiting commands: 8 of 20 runs of `seq 1 2000`). Output passes the PTY's ONLCR,
 * so the expected bytes are seq's with \n → \r\n. The single-command host is measured on a raw terminal
 * (python3's pty, read until EIO), so a failure is gate-sh's, never the measuring terminal's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { describeMismatch, runOnRawTerminal } from './raw-term.js';
import { Term } from './term.js';
import { startDaemon } from '../helpers/daemon.js';
import { loadCount } from '../helpers/load.js';

/** typed runs (npm run test:load: 100) */
const RUNS = loadCount(100, 20);
/** the single-command host starts a process per run (node + wrapper): fewer runs keep the suite short */
const HOST_RUNS = loadCount(20, 5);
const EXPECTED = Buffer.from(spawnSync('seq', ['1', '200000'], { maxBuffer: 1 << 26 }).stdout.toString().replace(/\n/g, '\r\n'));
const HOST = join(ROOT, 'dist', 'test', 'pty', 'fixtures', 'host-cli.js');

test(`interactive gate-sh: seq 1 200000 typed ${RUNS} times, every byte arrives every time`, { timeout: 300_000 }, async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_NO_AUTOSTART: '1' } });
  const t = new Term(GATE_SH, [], { env: d.te.env, cwd: d.te.dir });
  try {
    const prompt = Buffer.from('\x1b[1G\x1b[0Jgate-sh:');
    await t.waitFor(prompt, 15_000);
    let complete = 0;
    for (let i = 0; i < RUNS; i++) {
      t.discard();
      t.write('seq 1 200000\r');
      const start = (await t.waitFor('seq 1 200000\r\r\n', 15_000)) + 'seq 1 200000\r\r\n'.length;
      const end = await t.waitFor(prompt, 30_000, start);
      const why = describeMismatch(t.output().subarray(start, end), EXPECTED);
      if (why) assert.fail(`run ${i}: ${why}`);
      complete++;
    }
    assert.equal(complete, RUNS);
  } finally {
    t.pty.kill('SIGKILL');
    await d.stop();
    d.te.cleanup();
  }
});

test(`PTY host (gate-sh's single-command PTY path): seq 1 200000 run ${HOST_RUNS} times on a raw terminal, complete every time`, {
  timeout: 300_000,
}, async () => {
  // the outer terminal is a raw pty read until EIO (no node-pty there): any loss is the host's
  let next = 0;
  const short: string[] = [];
  const worker = async () => {
    while (next < HOST_RUNS) {
      const run = next++;
      const r = await runOnRawTerminal([process.execPath, HOST, 'seq', '1', '200000']);
      assert.equal(r.status, 0);
      const why = describeMismatch(r.output, EXPECTED);
      if (why) short.push(`run ${run}: ${why}`);
    }
  };
  await Promise.all([worker(), worker()]);
  assert.deepEqual(short, [], 'runs with missing bytes');
});

test('the raw terminal itself loses nothing of a quickly exiting program (where node-pty alone does)', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await runOnRawTerminal(['seq', '1', '200000']);
    assert.equal(r.status, 0);
    assert.equal(describeMismatch(r.output, EXPECTED), '', `run ${i}`);
  }
  const cut = await runOnRawTerminal(['bash', '-c', 'seq 1 200000 | head -c 1000; exit 3']);
  assert.equal(cut.status, 3);
  assert.match(describeMismatch(cut.output, EXPECTED), /^tail missing: \d+\/1488895 bytes/);
});
