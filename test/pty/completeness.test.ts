/**
 * Completeness through the PTY paths: `seq 1 200000` a hundred times, every byte every time
 * (node-pty alone loses the tail of quickly exiting commands; deps.md §4). Output passes the PTY's ONLCR,
 * so the expected bytes are seq's with \n → \r\n.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { startDaemon } from '../daemon/helpers.js';
import { Term } from './term.js';

const RUNS = 100;
/** the single-command host starts a process per run (node + wrapper): fewer runs keep the suite short */
const HOST_RUNS = 20;
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
      if (t.output().subarray(start, end).equals(EXPECTED)) complete++;
      else assert.fail(`run ${i}: ${end - start} bytes instead of ${EXPECTED.length}`);
    }
    assert.equal(complete, RUNS);
  } finally {
    t.pty.kill('SIGKILL');
    await d.stop();
    d.te.cleanup();
  }
});

test(`PTY host (gate-sh's single-command PTY path): seq 1 200000 run ${HOST_RUNS} times, complete every time`, { timeout: 300_000 }, async () => {
  let next = 0;
  const short: string[] = [];
  const worker = async () => {
    while (next < HOST_RUNS) {
      next++;
      const t = new Term(process.execPath, [HOST, 'seq', '1', '200000']);
      const e = await t.exit(60_000);
      assert.equal(e.exitCode, 0);
      if (!t.output().equals(EXPECTED)) short.push(`${t.output().length}/${EXPECTED.length}`);
    }
  };
  await Promise.all([worker(), worker()]);
  assert.deepEqual(short, [], 'runs with missing bytes');
});
