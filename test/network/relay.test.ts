/**
 * The native tunnel relay (src/network/relay.ts over native/gate_relay.c) with real sockets in this
 * process: a Unix socket pair standing for the run's bridge and the daemon's accepted end, a TCP
 * connection on 127.0.0.1 standing for the destination. What Node had read before the hand-over goes
 * first, bytes arrive whole and in order both ways, a half-close is passed on, the counts are exact, and
 * closing a pair (its run finished) ends both connections. In pipes mode this test is the bridge: it takes
 * the two pipes off the Unix socket (the native addon's recvFds, as shims/gate-netbridge.c's recvmsg).
 * A half between two sockets that has carried 1 MiB goes on through a buffer (copy mode, gate_relay.c):
 * the big transfers here cross that point mid-stream; the whole file runs once more with
 * GATE_RELAY_COPY=off (every byte spliced), so both ways of carrying bytes keep every property.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gateNative } from '../../src/exec/native.js';
import { closeRelayed, handOver, relayAnswer } from '../../src/network/relay.js';
import { waitFor } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';

const SPLICE_ONLY = process.env.GATE_RELAY_COPY === 'off';
/** bytes the relay has sent in copy mode in this process (a test hook of the addon, not in GateNative) */
const copied = (): number => (gateNative() as unknown as { relayCopied(): number }).relayCopied();

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'grelay-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function listen(server: Server, where: string | { host: string; port: number }): Promise<void> {
  return new Promise((r) => (typeof where === 'string' ? server.listen(where, r) : server.listen(where.port, where.host, r)));
}

/** A connected pair through a listening socket: [the connecting end, the accepted end]. */
async function pairOf(where: string | { host: string; port: number }): Promise<{ near: Socket; far: Socket; server: Server }> {
  const server = createServer({ allowHalfOpen: true });
  await listen(server, where);
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const addr = server.address();
  const near = typeof addr === 'string' ? connect({ path: addr, allowHalfOpen: true }) : connect({ port: addr!.port, host: '127.0.0.1', allowHalfOpen: true });
  await new Promise<void>((r) => near.once('connect', () => r()));
  return { near, far: await accepted, server };
}

function collect(s: Socket): Promise<Buffer> {
  const parts: Buffer[] = [];
  s.on('data', (d: Buffer) => parts.push(d));
  return new Promise((r) => s.once('end', () => r(Buffer.concat(parts))));
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('bytes both ways, heads first, half-closes passed on, exact counts', { timeout: 30_000 }, async () => {
  const bridge = await pairOf(join(dir, 'a.sock')); // near: the bridge in the sandbox; far: the daemon's end
  const dest = await pairOf({ host: '127.0.0.1', port: 0 }); // near: the daemon's upstream; far: the server
  try {
    const up = Buffer.alloc(3 << 20);
    for (let i = 0; i < up.length; i++) up[i] = (i * 7) & 255;
    const down = Buffer.alloc(9 << 20);
    for (let i = 0; i < down.length; i++) down[i] = (i * 13) & 255;
    // bytes already read by Node on both sides before the hand-over: they must go first
    bridge.far.pause();
    dest.near.pause();
    bridge.near.write('HEAD-UP:');
    dest.far.write('HEAD-DOWN:');
    await Promise.all([once(bridge.far, 'readable'), once(dest.near, 'readable')]);
    assert.deepEqual([bridge.far.readableLength, dest.near.readableLength], [8, 10]);
    const h = await handOver(bridge.far, dest.near);
    assert.ok(h, 'the relay took the pair');
    assert.equal(h.headDown, 10);
    const atServer = collect(dest.far);
    const atClient = collect(bridge.near);
    bridge.near.end(up); // the client's half-close reaches the server...
    const got = await atServer;
    assert.equal(got.subarray(0, 8).toString(), 'HEAD-UP:');
    assert.equal(sha(got.subarray(8)), sha(up));
    dest.far.end(down); // ...and the server can still answer
    const back = await atClient;
    assert.equal(back.subarray(0, 10).toString(), 'HEAD-DOWN:');
    assert.equal(sha(back.subarray(10)), sha(down));
    const r = await h.finished;
    assert.deepEqual(r, { up: 8 + up.length, down: 10 + down.length });
    // past its first MiB each half went on in copy mode (none with GATE_RELAY_COPY=off)
    if (SPLICE_ONLY) assert.equal(copied(), 0);
    else assert.ok(copied() >= up.length + down.length - (4 << 20), `copied ${copied()} bytes`);
  } finally {
    for (const p of [bridge, dest]) {
      p.near.destroy();
      p.far.destroy();
      p.server.close();
    }
  }
});

test('closing a relayed pair (its run finished) ends both connections and reports why', { timeout: 30_000 }, async () => {
  const bridge = await pairOf(join(dir, 'b.sock'));
  const dest = await pairOf({ host: '127.0.0.1', port: 0 });
  try {
    bridge.far.pause();
    dest.near.pause();
    const h = await handOver(bridge.far, dest.near);
    assert.ok(h);
    // carrying first: a byte each way
    const oneDown = new Promise<Buffer>((r) => bridge.near.once('data', r));
    dest.far.write('d');
    assert.equal(String(await oneDown), 'd');
    const oneUp = new Promise<Buffer>((r) => dest.far.once('data', r));
    bridge.near.write('u');
    assert.equal(String(await oneUp), 'u');
    const gone = (s: Socket) => new Promise<void>((r) => ['end', 'close', 'error'].forEach((e) => s.once(e, () => r())));
    const clientGone = gone(bridge.near);
    const serverGone = gone(dest.far);
    bridge.near.resume();
    dest.far.resume();
    closeRelayed(h.id);
    await Promise.all([clientGone, serverGone]);
    assert.deepEqual(await h.finished, { up: 1, down: 1, error: 'closed: the run finished' });
  } finally {
    for (const p of [bridge, dest]) {
      p.near.destroy();
      p.far.destroy();
      p.server.close();
    }
  }
});

test('pipes mode: the bridge is handed a pipe each way on one mark byte, after what Node had read; the Unix socket ends, the pipes carry the rest', { timeout: 30_000 }, async () => {
  const server = createServer({ allowHalfOpen: true });
  const path = join(dir, 'c.sock');
  await listen(server, path);
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  // the bridge's end: never read by Node (paused before it connects), read here with recvmsg
  const bridge = connect({ path, allowHalfOpen: true });
  bridge.pause();
  await new Promise<void>((r) => bridge.once('connect', () => r()));
  const daemonEnd = await accepted;
  const dest = await pairOf({ host: '127.0.0.1', port: 0 });
  let downPipe: Socket | undefined;
  let upPipe: Socket | undefined;
  try {
    daemonEnd.pause();
    dest.near.pause();
    dest.far.write('HEAD-DOWN:');
    await once(dest.near, 'readable');
    const h = await handOver(daemonEnd, dest.near, { pipes: true });
    assert.ok(h, 'the relay took the pair');
    const fd = (bridge as unknown as { _handle: { fd: number } })._handle.fd;
    const got: Buffer[] = [];
    const fds = await waitFor(() => {
      const r = gateNative().recvFds(fd, 65536);
      if (r === null) return undefined;
      got.push(r.data);
      return r.fds.length ? r.fds : undefined;
    }, 'the pipes');
    assert.equal(fds.length, 2);
    assert.deepEqual(Buffer.concat(got), Buffer.from('HEAD-DOWN:\0'), "what Node had read, then the mark");
    downPipe = new Socket({ fd: fds[0], readable: true, writable: false });
    upPipe = new Socket({ fd: fds[1], readable: false, writable: true });
    // bytes sent on the Unix socket before it ends come first, then the pipe's
    bridge.write('BEFORE:');
    bridge.end();
    const up = Buffer.alloc(3 << 20, 'u');
    const down = Buffer.alloc(9 << 20, 'd');
    const atServer = collect(dest.far);
    const atClient = collect(downPipe);
    upPipe.end(up);
    const gotUp = await atServer;
    assert.equal(gotUp.length, 7 + up.length);
    assert.equal(gotUp.subarray(0, 7).toString(), 'BEFORE:');
    assert.ok(gotUp.subarray(7).equals(up));
    dest.far.end(down);
    const gotDown = await atClient;
    assert.ok(gotDown.equals(down), `down: ${gotDown.length} bytes`);
    assert.deepEqual(await h.finished, { up: 7 + up.length, down: 10 + down.length });
  } finally {
    downPipe?.destroy();
    upPipe?.destroy();
    bridge.destroy();
    daemonEnd.destroy();
    dest.near.destroy();
    dest.far.destroy();
    dest.server.close();
    server.close();
  }
});

test("one plain-HTTP answer's body (relayAnswer): Node's head first, exactly the length, then the connection is Node's again both ways", { timeout: 30_000 }, async () => {
  const client = await pairOf({ host: '127.0.0.1', port: 0 }); // near: the client; far: the daemon's end
  const dest = await pairOf({ host: '127.0.0.1', port: 0 }); // near: the daemon's upstream; far: the server
  try {
    const body = Buffer.alloc(3 << 20);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 255;
    dest.near.pause();
    dest.far.write(body.subarray(0, 1000));
    await once(dest.near, 'readable');
    const parts: Buffer[] = [];
    client.near.on('data', (d: Buffer) => parts.push(d));
    // the next request arrives while the body is relayed: Node reads it, the relay never does
    const heard: Buffer[] = [];
    client.far.on('data', (d: Buffer) => heard.push(d));
    const h = await relayAnswer(client.far, dest.near, null, body.length);
    assert.ok(h, 'the relay took the answer');
    client.near.write('NEXT REQUEST');
    dest.far.write(body.subarray(1000));
    // never reach the client; the upstream is closed with them unread, so the server's end may be reset
    dest.far.on('error', () => undefined);
    dest.far.write('BYTES PAST THE BODY');
    const r = await h.finished;
    assert.deepEqual(r, { up: 0, down: body.length });
    await waitFor(() => Buffer.concat(heard).toString() === 'NEXT REQUEST' || undefined, 'the next request, read by Node');
    assert.equal(client.far.destroyed, false);
    client.far.write('NEXT ANSWER');
    await waitFor(() => Buffer.concat(parts).length === body.length + 11 || undefined, 'the body and the next answer');
    const got = Buffer.concat(parts);
    assert.equal(sha(got.subarray(0, body.length)), sha(body));
    assert.equal(got.subarray(body.length).toString(), 'NEXT ANSWER');
  } finally {
    for (const p of [client, dest]) {
      p.near.destroy();
      p.far.destroy();
      p.server.close();
    }
  }
});

test('an answer that ends with its connection is carried to the end and the client told so; one that ends early is an error', { timeout: 30_000 }, async () => {
  for (const length of [null, 5000]) {
    const client = await pairOf({ host: '127.0.0.1', port: 0 });
    const dest = await pairOf({ host: '127.0.0.1', port: 0 });
    try {
      dest.near.pause();
      const atClient = collect(client.near);
      const h = await relayAnswer(client.far, dest.near, Buffer.from('abc'), length);
      assert.ok(h);
      dest.far.end(Buffer.alloc(1000, 0x61)); // 1,003 bytes in all, then the server closes
      const r = await h.finished;
      if (length === null) {
        assert.deepEqual(r, { up: 0, down: 1003 });
        assert.equal((await atClient).length, 1003, 'the client reads to its end of file');
      } else assert.match(r.error ?? '', /ended 3997 bytes early/);
    } finally {
      for (const p of [client, dest]) {
        p.near.destroy();
        p.far.destroy();
        p.server.close();
      }
    }
  }
});

test('the same with every byte spliced (GATE_RELAY_COPY=off): this file in a process of its own', { skip: SPLICE_ONLY, timeout: 120_000 }, async () => {
  // NODE_TEST_CONTEXT would make the child report to this runner instead of printing its TAP
  const { NODE_TEST_CONTEXT: _, ...env } = process.env as Record<string, string>;
  const r = await run(process.execPath, ['--test', '--test-reporter=tap', fileURLToPath(import.meta.url)], {
    env: { ...env, GATE_RELAY_COPY: 'off' },
    timeoutMs: 110_000,
  });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /# pass [1-9]/);
  assert.match(r.stdout, /# fail 0/);
});
