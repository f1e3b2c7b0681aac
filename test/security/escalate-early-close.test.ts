/**
 * Issue 28, bounded resources: nothing a sandbox sends on the channels it reaches ends the daemon. A
 * connection to escalate.sock (in the request folder every sandbox of the session reaches) closed before
 * its request was refused with a reply that hit EPIPE, an 'error' event no one listened to: the daemon
 * exited. Real daemon; the connection is made as any program in a sandbox could make it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { pingDaemon } from '../../src/transport/ping.js';

test('a connection to escalate.sock closed before its request does not end the daemon', { timeout: 60_000 }, async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'workspace-write' } });
  try {
    let refused = 0;
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const c = connect(d.paths.escalateSock, () => c.destroy());
        c.on('close', () => resolve());
        c.on('error', () => resolve());
      });
      // the daemon refuses it (and logs so) once it sees the end of the connection
      await waitFor(() => (d.output().split('escalation refused: the caller closed').length - 1 > refused ? true : undefined), 'the refusal', 10_000);
      refused++;
    }
    assert.equal(d.child.exitCode, null, d.output());
    assert.equal(d.child.signalCode, null, d.output());
    assert.ok(await pingDaemon(d.paths, 2000), d.output());
  } finally {
    await d.close();
  }
});
