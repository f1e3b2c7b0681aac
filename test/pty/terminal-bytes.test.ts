/**
 * gate-sh on a terminal prints bash's bytes, byte for byte, whatever state its standard input is in: a
 * terminal with nothing typed (open), a terminal with an end of file queued (what `script` leaves when its
 * own stdin is at EOF: the `^@` case), and no stdin at all (closed). Measured on a raw terminal (python3's
 * pty read until EIO, test/pty/raw-term.ts), the same script under bash on an identical terminal as the
 * reference.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GATE_SH } from '../helpers/env.js';
import { describeMismatch, runOnRawTerminal } from './raw-term.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

let d: DaemonProc;
before(async () => {
  d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'never', GATE_NO_AUTOSTART: '1' } });
});
after(async () => {
  await d.stop();
  d.te.cleanup();
});

const EOF = Buffer.from([0x04]);
/** fd 0 closed for the program, on the same terminal */
const CLOSED = ['sh', '-c', 'exec "$@" 0<&-', 'sh'];

async function same(script: string, stdin: 'open' | 'eof' | 'closed'): Promise<void> {
  const wrap = stdin === 'closed' ? CLOSED : [];
  const typed = stdin === 'eof' ? EOF : undefined;
  const want = await runOnRawTerminal([...wrap, 'bash', '-c', script], 60_000, { env: d.te.env, typed });
  const got = await runOnRawTerminal([...wrap, GATE_SH, '-c', script], 60_000, { env: d.te.env, typed });
  assert.equal(describeMismatch(got.output, want.output), '', `gate-sh -c '${script}' with stdin ${stdin}`);
  assert.equal(got.status, want.status);
}

// the sleep lets whatever gate-sh relays from the terminal reach the hosted PTY before seq is done
for (const stdin of ['open', 'eof', 'closed'] as const) {
  test(`stdin ${stdin}: gate-sh -c 'sleep 1; seq 1 5' prints bash's bytes on a terminal`, { timeout: 120_000 }, async () => {
    await same('sleep 1; seq 1 5', stdin);
  });
}

test("stdin at EOF: a hosted reader gets the end of file as bash's does (not a NUL byte), and exits the same", { timeout: 120_000 }, async () => {
  await same('cat; echo "cat ended: $?"; exit 3', 'eof');
});
