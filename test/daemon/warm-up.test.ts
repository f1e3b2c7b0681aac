import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { pingDaemon } from '../../src/daemon/ping.js';
import { killAll, preflight, startDaemon, waitFor } from './helpers.js';

after(killAll);

test('warm-up: the daemon compiles its parsers in idle time (ping shows progress) and answers clients meanwhile', async () => {
  const d = await startDaemon({ args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  try {
    // busy: a client keeps asking; every answer is right while warm-up waits its turn
    for (let i = 0; i < 30; i++) {
      const r = await preflight(d.paths, `echo w${i} && rm -f /tmp/nothing-${i}`);
      assert.equal(r.type, 'preflight');
      assert.deepEqual(r.subcommands.map((s: any) => s.argv[0]), ['echo', 'rm']);
    }
    const during = (await pingDaemon(d.paths)) as { warm_up: { done: number; of: number } };
    assert.ok(during.warm_up.of > during.warm_up.done, `warm-up waits while clients are served: ${JSON.stringify(during.warm_up)}`);
    // idle: it finishes (pings are requests too, so poll slowly)
    const info = await waitFor(
      async () => {
        await new Promise((r) => setTimeout(r, 500));
        const w = ((await pingDaemon(d.paths)) as { warm_up: { done: number; of: number } }).warm_up;
        return w.done === w.of ? w : undefined;
      },
      'warm-up to finish',
      60_000,
    );
    assert.equal(info.of, 400);
    const r = await preflight(d.paths, 'ls | wc -l');
    assert.deepEqual(r.subcommands.map((s: any) => s.argv.join(' ')), ['ls', 'wc -l']);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});
