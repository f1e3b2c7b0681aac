/**
 * src/exec/signals.ts: bash's status convention, and the forwarder that holds signals arriving before the
 * child exists and passes later ones on until it has exited. The signals are real (sent to this process);
 * the child is a recorder with the ChildProcess fields the forwarder reads. Test only, no trust boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { constants } from 'node:os';
import { exitStatus, forwardSignals } from '../../../src/exec/signals.js';

test('exitStatus: the exit code, else 128 + the signal number, else 126', () => {
  assert.equal(exitStatus(3, null, constants.signals), 3);
  assert.equal(exitStatus(0, null, constants.signals), 0);
  assert.equal(exitStatus(null, 'SIGKILL', constants.signals), 137);
  assert.equal(exitStatus(null, 'SIGINT', constants.signals), 130);
  assert.equal(exitStatus(null, null, constants.signals), 126);
});

/** A signal to this process, awaited until Node has run its handlers. Signal handlers do not keep the
 * event loop alive, so a handle does while the signal is on its way (it never fires). */
async function raise(sig: NodeJS.Signals): Promise<void> {
  const seen = once(process, sig);
  const alive = setInterval(() => {}, 60_000);
  try {
    process.kill(process.pid, sig);
    await seen;
  } finally {
    clearInterval(alive);
  }
}

function recorder() {
  const got: (NodeJS.Signals | number | undefined)[] = [];
  return {
    got,
    exitCode: null as number | null,
    signalCode: null as NodeJS.Signals | null,
    kill(sig?: NodeJS.Signals | number) {
      got.push(sig);
      return true;
    },
  };
}

test('forwardSignals: held until the child exists, then delivered in order, then forwarded as they come', async () => {
  const f = forwardSignals(['SIGUSR2', 'SIGWINCH']);
  try {
    await raise('SIGUSR2');
    await raise('SIGWINCH');
    const child = recorder();
    f.attach(child);
    assert.deepEqual(child.got, ['SIGUSR2', 'SIGWINCH']);
    await raise('SIGUSR2');
    assert.deepEqual(child.got, ['SIGUSR2', 'SIGWINCH', 'SIGUSR2']);
  } finally {
    f.dispose();
  }
});

test('forwardSignals: nothing is sent to a child that has exited, and nothing after dispose', async () => {
  const f = forwardSignals(['SIGUSR2']);
  const child = recorder();
  try {
    f.attach(child);
    child.exitCode = 0;
    await raise('SIGUSR2');
    assert.deepEqual(child.got, []);
  } finally {
    f.dispose();
  }
  assert.equal(process.listenerCount('SIGUSR2'), 0);
});
