/**
 * Denial of service of the daemon by what a gated run may send it (issue 28, finding 7): idle stream
 * connections held by the thousand must not stop a rule reload or an approver attaching, a huge partial
 * frame must cost neither memory nor CPU, and deframing is linear. Test-only: a real daemon in a temp
 * environment, attacked over its own sockets by real processes (python3) of this test, as a script in a
 * sandbox could (the request folder is mounted into every sandbox; the peer is the same uid either way).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { killAll, startDaemon, track, waitFor } from '../helpers/daemon.js';
import { approveConsole, preflight } from '../daemon/helpers.js';
import { Deframer, frame } from '../../src/protocol/codec.js';
import { MAX_STREAM_FRAME } from '../../src/protocol/messages.js';
import { unixDgram } from '../../src/transport/dgram.js';
import { RateQueues } from '../../src/transport/run-rate.js';

after(killAll);

/** CPU seconds (user + system) and resident set of a process, from /proc. */
function usage(pid: number): { cpu: number; rss: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  return { cpu, rss };
}

/** Writes `total` bytes in `piece`-byte writes, waiting for drain; resolves with the bytes written when
 * done or when the daemon closed the connection. */
function feed(c: Socket, total: number, piece: number): Promise<{ written: number; closed: boolean }> {
  return new Promise((resolve) => {
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(piece, 0x20);
    const finish = (): void => resolve({ written, closed });
    c.on('close', () => {
      closed = true;
      finish();
    });
    c.on('error', () => undefined);
    const pump = (): void => {
      while (!closed && written < total) {
        const n = Math.min(piece, total - written);
        written += n;
        if (!c.write(n === piece ? chunk : chunk.subarray(0, n))) return void c.once('drain', pump);
      }
      if (written >= total) finish();
    };
    pump();
  });
}

test('a 64 MiB partial frame on stream.sock: refused by its length before it is buffered; the daemon stays small and idle', async () => {
  const d = await startDaemon();
  try {
    const pid = d.child.pid!;
    await preflight(d.paths, 'ls'); // the first decision's code is loaded before measuring
    const before = usage(pid);
    const c = createConnection(d.paths.streamSock);
    await new Promise((r) => c.once('connect', r));
    const replies: Buffer[] = [];
    const deframer = new Deframer();
    c.on('data', (b: Buffer) => replies.push(...deframer.push(b)));
    const head = Buffer.alloc(4);
    head.writeUInt32LE(MAX_STREAM_FRAME, 0); // the largest length the old deframer accepted
    c.write(head);
    const r = await feed(c, MAX_STREAM_FRAME - 1, 64 * 1024);
    // the daemon answers a ping now: nothing of the frame is still being worked on
    await preflight(d.paths, 'ls');
    const now = usage(pid);
    c.destroy();
    const cpu = now.cpu - before.cpu;
    const rss = now.rss - before.rss;
    process.stdout.write(`# 64 MiB partial frame: daemon CPU ${cpu.toFixed(2)} s, RSS ${(rss / 2 ** 20).toFixed(1)} MiB, written ${r.written}\n`);
    assert.ok(r.closed, 'the daemon closed the connection');
    // its answer may be lost to the client's own write failing first (EPIPE); the daemon's log says why
    for (const f of replies) assert.equal(JSON.parse(f.toString('utf8')).code, 'too-large');
    assert.match(d.output(), /too-large\): frame of 67108864 bytes exceeds 16777216/);
    assert.ok(cpu < 2, `daemon CPU ${cpu} s`);
    assert.ok(rss < 24 * 2 ** 20, `daemon RSS grew by ${rss} bytes`);
  } finally {
    await d.close();
  }
});

test('deframing is linear: a 16 MiB frame in 4 KiB pieces costs one copy, not one per piece', () => {
  const body = Buffer.alloc(16 * 2 ** 20, 0x41);
  const framed = frame(body);
  const t0 = process.cpuUsage();
  const d = new Deframer();
  const out: Buffer[] = [];
  for (let i = 0; i < framed.length; i += 4096) out.push(...d.push(framed.subarray(i, i + 4096)));
  const used = process.cpuUsage(t0);
  const s = (used.user + used.system) / 1e6;
  process.stdout.write(`# 16 MiB in 4 KiB pieces: ${s.toFixed(3)} s\n`);
  assert.equal(out.length, 1);
  assert.ok(out[0].equals(body));
  assert.ok(s < 1, `deframing took ${s} s of CPU`);
});

/**
 * 20,000 connections opened and held open by 40 processes of 500 each (so neither the cap per peer nor the
 * one per daemon alone is what holds): prints "held N" once all connected, then waits to be killed. With
 * "fds", each connection also sends three descriptors (as an escalation's stdin, stdout, stderr) and one
 * byte of a frame that never comes whole.
 */
const HOLDER = `
import os, socket, sys, signal
path, procs, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fds = len(sys.argv) > 4 and sys.argv[4] == "fds"
null = os.open("/dev/null", os.O_RDWR)
r, w = os.pipe()
for _ in range(procs):
    if os.fork() == 0:
        os.close(r)
        held = []
        for _ in range(each):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # blocking: waits for room in the backlog
            try:
                s.connect(path)
                held.append(s)
                if fds:
                    socket.send_fds(s, [b"x"], [null, null, null])
            except OSError:  # refused, or closed by the daemon before the descriptors went
                s.close()
        os.write(w, b"%d\\n" % len(held))
        signal.pause()
        os._exit(0)
os.close(w)
total = 0
with os.fdopen(r) as f:
    for _ in range(procs):
        total += int(f.readline())
print("held", total, flush=True)
signal.pause()
`;

test('20,000 idle stream connections: a newly added forbidden rule is still loaded, and an approver still attaches', async () => {
  const d = await startDaemon({ rules: ['prefix_rule(pattern=["rm"], decision="allow")'] });
  const holder = track(spawn('python3', ['-c', HOLDER, d.paths.streamSock, '40', '500'], { stdio: ['ignore', 'pipe', 'inherit'], detached: true }));
  try {
    // allowed first: rm is not forbidden by the rules the daemon started with
    const allowed = await preflight(d.paths, 'rm -f victim');
    assert.notEqual(allowed.action.type, 'Deny', JSON.stringify(allowed));
    const held = await new Promise<string>((resolve) => createInterface({ input: holder.stdout! }).once('line', resolve));
    process.stdout.write(`# ${held}\n`);
    appendFileSync(join(d.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["rm"], decision="forbidden")\n');
    const denied = await waitFor(
      async () => {
        const r = await preflight(d.paths, 'rm -f victim');
        return r.action.type === 'Deny' ? r : undefined;
      },
      'the new forbidden rule to be in force',
      15_000,
    );
    assert.match(JSON.stringify(denied), /forbidden/);
    // no reload failed on the way (a failed one keeps the old rules until the next change happens to load)
    assert.doesNotMatch(d.output(), /policy reload failed/);
    const console = await approveConsole(d.env, 'after-the-flood');
    await console.close();
  } finally {
    try {
      process.kill(-holder.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await d.close();
  }
});

test('a run flooding the request channel with 40,000 execs is held to its rate; another run is answered at once meanwhile', async () => {
  // a rate under what this machine handles, so the bound is what holds the flood (default: 5,000 a second)
  const RATE = 500;
  const d = await startDaemon({ env: { GATE_REQUEST_RATE: String(RATE) } });
  const sock = unixDgram.createSocket('unix_dgram');
  const answered: number[] = [];
  sock.on('message', () => answered.push(Date.now()));
  sock.on('error', () => undefined);
  sock.bind(join(d.paths.clientDir, 'flood.sock'));
  try {
    await preflight(d.paths, 'ls');
    const exec = (i: number): Buffer =>
      Buffer.from(JSON.stringify({ v: 1, id: `flood-${i}`, type: 'exec', run_id: 'r-flood', program: '/bin/true', argv: ['true'], cwd: '/tmp', pid: 1 }));
    const t0 = Date.now();
    let lateMs = -1;
    await new Promise<void>((resolve) => {
      let i = 0;
      const next = (): void => {
        if (i >= 40_000) return resolve();
        if (i === 20_000) {
          // halfway: another client's decision, timed
          const s0 = Date.now();
          void preflight(d.paths, 'ls -la').then(() => (lateMs = Date.now() - s0));
        }
        const b = exec(i);
        sock.send(b, 0, b.length, d.paths.requestSock, (err) => {
          if (err && (err as { code?: number }).code === -11) return void setTimeout(next, 0);
          i++;
          if (i % 256 === 0) setImmediate(next);
          else next();
        });
      };
      next();
    });
    const sentMs = Date.now() - t0;
    await waitFor(() => lateMs >= 0 || undefined, 'the other client\'s answer');
    const during = answered.filter((t) => t <= t0 + sentMs).length;
    const bound = RATE + (RATE * sentMs) / 1000;
    process.stdout.write(`# 40,000 execs sent in ${sentMs} ms: ${during} answered meanwhile (bound ${Math.round(bound)}); the other client waited ${lateMs} ms\n`);
    assert.ok(during <= bound + 200, `${during} answered while sending for ${sentMs} ms`);
    assert.ok(lateMs < 2_000, `the other client waited ${lateMs} ms`);
    // the flood's queued requests are still answered, at its rate (one dropped past the queue is resent by its client)
    await waitFor(() => (answered.length > during ? true : undefined), 'the flood\'s queued answers');
  } finally {
    sock.close();
    await d.close();
  }
});

test('RateQueues: over its rate a key waits in turn, past its queue it is dropped; other keys go on', async () => {
  let now = 0;
  const q = new RateQueues({ perSecond: 1_000, burst: 2, queued: 3 }, () => now);
  const started: string[] = [];
  const dropped: string[] = [];
  const go = (k: string, i: number): boolean =>
    q.admit(
      k,
      () => started.push(`${k}${i}`),
      () => dropped.push(`${k}${i}`),
    );
  assert.deepEqual([go('a', 1), go('a', 2), go('a', 3), go('a', 4), go('a', 5), go('a', 6)], [true, true, false, false, false, false]);
  assert.deepEqual(dropped, ['a6']);
  assert.equal(go('b', 1), true, 'another key is not held up');
  now += 2; // two tokens
  await waitFor(() => started.length >= 2, 'two queued to start', 5000).catch(() => undefined);
  assert.deepEqual(started, ['a3', 'a4']);
  now += 10;
  await waitFor(() => started.length >= 3, 'the last queued to start', 5000).catch(() => undefined);
  assert.deepEqual(started, ['a3', 'a4', 'a5']);
  assert.equal(q.waiting, 0);
  q.close();
});

test('6,000 escalate.sock connections, each sending 3 descriptors (24,000 descriptors on the old runner): a new forbidden rule is still loaded, and an approver still attaches', async () => {
  const d = await startDaemon({ rules: ['prefix_rule(pattern=["rm"], decision="allow")'] });
  const holder = track(
    spawn('python3', ['-c', HOLDER, d.paths.escalateSock, '12', '500', 'fds'], { stdio: ['ignore', 'pipe', 'inherit'], detached: true }),
  );
  try {
    const allowed = await preflight(d.paths, 'rm -f victim');
    assert.notEqual(allowed.action.type, 'Deny', JSON.stringify(allowed));
    const held = await new Promise<string>((resolve) => createInterface({ input: holder.stdout! }).once('line', resolve));
    process.stdout.write(`# ${held}\n`);
    appendFileSync(join(d.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["rm"], decision="forbidden")\n');
    await waitFor(
      async () => ((await preflight(d.paths, 'rm -f victim')).action.type === 'Deny' ? true : undefined),
      'the new forbidden rule to be in force',
      15_000,
    );
    assert.doesNotMatch(d.output(), /policy reload failed/);
    const console = await approveConsole(d.env, 'after-the-escalation-flood');
    await console.close();
  } finally {
    try {
      process.kill(-holder.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await d.close();
  }
});
