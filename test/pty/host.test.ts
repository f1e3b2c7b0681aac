/**
 * The PTY host on a real terminal: node-pty plays the user's terminal around the host (the same entry
 * gate-sh uses with a terminal), and real programs (bash read, less, stty, sleep) run inside.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { procStat } from '../../src/terminal/pty-reap.js';
import { Term } from './term.js';
import { waitFor } from '../helpers/daemon.js';

const HOST = join(ROOT, 'dist', 'test', 'pty', 'fixtures', 'host-cli.js');
const host = (args: string[], o: { cols?: number; rows?: number } = {}) => new Term(process.execPath, [HOST, ...args], o);
/** Ends what a test left running, passed or failed: the terminal (so the host and its session get a hang-up)
 * and any tagged process that ignores one. */
function cleanup(t: Term, tag?: string): void {
  for (const p of tag ? processesWith(tag) : []) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
  t.pty.kill('SIGKILL');
}

/** pids whose command line contains `needle` */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').includes(needle) && procStat(Number(e))?.state !== 'Z') out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

test('interactive read with a prompt', async () => {
  const t = host(['bash', '-c', 'read -r -p "name? " n; echo "hello [$n]"; exit 3']);
  try {
    await t.waitFor('name? ');
    t.write('bob\r');
    await t.waitFor('hello [bob]');
    assert.equal((await t.exit()).exitCode, 3);
  } finally {
    cleanup(t);
  }
});

test('less shows the file and quits on a keypress', async () => {
  const t = host(['bash', '-c', 'seq 1 500 | less'], { rows: 10 });
  try {
    await t.waitFor(/\b9\r?\n/);
    assert.ok(!t.text().includes('480'), 'less pages instead of dumping');
    t.write(' '); // next page
    await t.waitFor(/\b1[0-9]\b/);
    t.write('q');
    assert.equal((await t.exit()).exitCode, 0);
  } finally {
    cleanup(t);
  }
});

test('resize is seen by stty size', async () => {
  // each line typed runs stty size again: the host passes the resize on when its own SIGWINCH arrives, which
  // nothing outside shows, so Enter is pressed (each press answered by a size) until the new size is there
  const t = host(['bash', '-c', 'stty size; while read -r _; do stty size; done'], { cols: 80, rows: 24 });
  try {
    await t.waitFor('24 80');
    t.pty.resize(132, 50);
    for (let i = 0; !t.text().includes('50 132') && i < 50; i++) {
      const from = t.output().length;
      t.write('\r');
      await t.waitFor(/\d+ \d+\r\n/, 10_000, from);
    }
    await t.waitFor('50 132');
    t.write('\x04'); // end of input ends the loop
    assert.equal((await t.exit()).exitCode, 0);
  } finally {
    cleanup(t);
  }
});

test('Ctrl-C stops a sleep; the status is 128+SIGINT', async () => {
  // an argument of its own, to see the sleep running before Ctrl-C is typed
  const t = host(['bash', '-c', 'echo ready; sleep 30.25; echo after']);
  try {
    await t.waitFor('ready');
    await waitFor(() => processesWith('30.25').length > 0, 'the sleep to run');
    const t0 = Date.now();
    t.write('\x03');
    assert.equal((await t.exit(5000)).exitCode, 130);
    assert.ok(Date.now() - t0 < 3000);
    assert.ok(!t.text().includes('after'));
  } finally {
    cleanup(t);
  }
});

test('exit statuses are preserved, signals as 128+n', async () => {
  const cases: Array<[string, number]> = [
    ['exit 0', 0],
    ['exit 7', 7],
    ['exit 255', 255],
    ['kill -TERM $$', 143],
    ['kill -KILL $$', 137],
  ];
  const hosts: Term[] = [];
  try {
    await Promise.all(
      cases.map(async ([script, want]) => {
        const t = host(['bash', '-c', script]);
        hosts.push(t);
        assert.equal((await t.exit()).exitCode, want, script);
      }),
    );
  } finally {
    for (const t of hosts) cleanup(t);
  }
});

test('invalid UTF-8 printed and typed survives byte for byte', async () => {
  const t = host(['bash', '-c', `printf 'A\\xff\\xfe\\x80\\xc3Z\\n'; IFS= read -r x; printf '%s' "$x" | od -An -tx1`]);
  try {
    await t.waitFor(Buffer.from([0x41, 0xff, 0xfe, 0x80, 0xc3, 0x5a, 0x0d, 0x0a]));
    t.write(Buffer.from([0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0x0d]));
    await t.waitFor('ff c0 80 ed a0 80');
    assert.equal((await t.exit()).exitCode, 0);
  } finally {
    cleanup(t);
  }
});

test('a 1 MB paste arrives intact', async () => {
  const line = 'x'.repeat(63) + '\n';
  let paste = '';
  for (let i = 0; paste.length < 1 << 20; i++) paste += String(i).padStart(8, '0') + line;
  paste = paste.slice(0, 1 << 20);
  paste = paste.slice(0, paste.lastIndexOf('\n') + 1);
  const want = createHash('sha256').update(paste).digest('hex');
  const t = host(['bash', '-c', 'stty -echo; echo go; sha256sum; wc -c </dev/null >/dev/null']);
  try {
    await t.waitFor('go');
    t.write(paste);
    t.write('\x04');
    await t.waitFor(want, 60_000);
    assert.equal((await t.exit()).exitCode, 0);
  } finally {
    cleanup(t);
  }
});

test('Ctrl-Z suspends the host with the job; fg resumes both', async () => {
  const script = 'echo ready; read -r x; echo "got [$x]"';
  const t = host(['bash', '-c', script]);
  try {
    await t.waitFor('ready');
    const hostPid = processesWith(HOST).find((p) => p !== t.pid && procStat(p)?.sid === t.pid);
    assert.ok(hostPid, 'the host process');
    t.write('\x1a');
    await waitFor(() => t.stops > 0, 'the user shell to see gate-sh stop', 5000).catch(() => undefined);
    assert.equal(t.stops, 1, 'the user shell sees gate-sh stop');
    assert.equal(procStat(hostPid)?.state, 'T', 'gate-sh stopped with its job, handing the terminal back');
    const inner = processesWith(script).find((p) => procStat(p)?.sid !== t.pid && !readFileSync(`/proc/${p}/cmdline`, 'latin1').includes('7770'));
    assert.ok(inner && procStat(inner)?.state === 'T', 'the hosted job is stopped');
    t.resume();
    // typed only once the host and its job run again
    await waitFor(() => procStat(hostPid)?.state !== 'T' && procStat(inner)?.state !== 'T', 'the host and the job to continue');
    t.write('back\r');
    await t.waitFor('got [back]');
    assert.equal((await t.exit()).exitCode, 0);
    assert.ok(!t.text().includes('Stopped'), 'no job notice from inside');
  } finally {
    cleanup(t);
  }
});

test('terminal closed under a running command: everything gets SIGHUP and is reaped', async () => {
  const tag = `gate-pty-hup-${process.pid}`;
  const t = host(['bash', '-c', `(trap '' HUP; exec -a ${tag} sleep 1000) & exec -a ${tag} sleep 1001`]);
  try {
    // (generous: a wait ends as soon as its condition holds, and the CI's cores are shared with other loads)
    await waitFor(() => processesWith(tag).length >= 2, 'both sleeps to run', 30_000).catch(() => undefined);
    assert.equal(processesWith(tag).length, 2);
    (t.pty as unknown as { destroy(): void }).destroy(); // the terminal emulator's window closes
    // SIGHUP, then SIGKILL after the host's grace period; allow for a loaded machine before judging
    // (10 s was not enough once at load 21: the host's grace period runs on the same starved cores)
    await waitFor(() => processesWith(tag).length === 0, 'the session to be reaped', 30_000).catch(() => undefined);
    assert.deepEqual(processesWith(tag), [], 'nothing lingers, not even a process ignoring SIGHUP');
  } finally {
    cleanup(t, tag);
  }
});

test('a second hang-up while the host reaps does not cut the reaping short', async () => {
  // closing terminals often signal twice (EIO then SIGHUP, or the emulator's SIGHUP and the kernel's)
  const tag = `gate-pty-hup2-${process.pid}`;
  const t = host(['bash', '-c', `(trap '' HUP; exec -a ${tag} sleep 1000) & exec -a ${tag} sleep 1001`]);
  try {
    // (generous: a wait ends as soon as its condition holds, and the CI's cores are shared with other loads)
    await waitFor(() => processesWith(tag).length >= 2, 'both sleeps to run', 30_000).catch(() => undefined);
    assert.equal(processesWith(tag).length, 2);
    const hostPid = processesWith(HOST).find((p) => p !== t.pid && procStat(p)?.sid === t.pid);
    assert.ok(hostPid, 'the host process');
    process.kill(hostPid, 'SIGHUP');
    // the host is reaping (the sleep that takes SIGHUP is gone) and still inside its grace period (the
    // other one is not yet SIGKILLed): the second hang-up comes now
    await waitFor(() => processesWith(tag).length < 2, 'the first hang-up to reach the session', 30_000);
    try {
      process.kill(hostPid, 'SIGHUP');
    } catch (e) {
      // (the host already reaped everything and ended, grace period and all, before this look: nothing to cut)
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
    // (10 s was not enough once at load 21: the host's grace period runs on the same starved cores)
    await waitFor(() => processesWith(tag).length === 0, 'the session to be reaped', 30_000).catch(() => undefined);
    assert.deepEqual(processesWith(tag), [], 'the process ignoring SIGHUP is SIGKILLed all the same');
  } finally {
    cleanup(t, tag);
  }
});

test('hang-up reaps a session that keeps forking: whatever was born during the SIGKILL sweep goes too', async () => {
  const tag = `gate-pty-fork-${process.pid}`;
  // bounded (the sweep comes after the first five): a host that fails to reap must fail this test, not fill
  // the machine's process table (an unbounded storm once did, under another suite's load)
  const t = host(['bash', '-c', `trap '' HUP; for ((i = 0; i < 3000; i++)); do (trap '' HUP; exec -a ${tag} sleep 1000) & done; wait`]);
  try {
    await waitFor(() => processesWith(tag).length >= 5, 'the session to fork', 4000).catch(() => undefined);
    (t.pty as unknown as { destroy(): void }).destroy();
    // (10 s was not enough once at load 21: the host's grace period runs on the same starved cores)
    await waitFor(() => processesWith(tag).length === 0, 'the session to be reaped', 30_000).catch(() => undefined);
    assert.deepEqual(processesWith(tag), [], 'nothing of the session lingers');
  } finally {
    cleanup(t, tag);
  }
});
