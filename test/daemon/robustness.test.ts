import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unixDgram } from '../../src/transport/dgram.js';
import { RequestClient } from '../../src/transport/client.js';
import { TestClient } from './dgram-client.js';
import { approveConsole, preflight, runShell } from './helpers.js';
import { tempEnv } from '../helpers/env.js';
import { auditLines, killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

/** Send with backoff on EAGAIN (the daemon's queue is 10 datagrams deep). */
function sendAll(sock: ReturnType<typeof unixDgram.createSocket>, to: string, bufs: Buffer[]): Promise<number> {
  return new Promise((resolve) => {
    let i = 0;
    let failed = 0;
    const next = (): void => {
      if (i >= bufs.length) return resolve(failed);
      const b = bufs[i];
      sock.send(b, 0, b.length, to, (err) => {
        if (err && (err as any).code === -11) return void setTimeout(next, 1);
        if (err) failed++;
        i++;
        if (i % 64 === 0) setImmediate(next);
        else next();
      });
    };
    next();
  });
}

test('10,000 malformed datagrams (garbage, bad version, huge, truncated, unbound senders) leave the daemon answering', async () => {
  const d = await startDaemon();
  const replyPath = join(d.paths.clientDir, 'flood.sock');
  const sock = unixDgram.createSocket('unix_dgram');
  const replies: any[] = [];
  sock.on('message', (b: Buffer) => replies.push(JSON.parse(b.toString())));
  sock.on('error', () => undefined);
  sock.bind(replyPath);
  const unbound = unixDgram.createSocket('unix_dgram');
  unbound.on('error', () => undefined);
  try {
    const kinds: Buffer[] = [
      Buffer.from([0xff, 0x00, 0x13, 0x37]),
      Buffer.from('{"v":1,'),
      Buffer.from('[1,2,3]'),
      Buffer.from('{"v":99,"id":"old","type":"ping"}'),
      Buffer.from('{"v":1,"id":"t","type":"teleport"}'),
      Buffer.from('{"v":1,"id":"p","type":"preflight","shell":"bash"}'),
      Buffer.from('{"v":1,"type":"ping"}'),
      Buffer.alloc(100_000, 0x7b), // over 64 KiB: arrives cut to 65,536 bytes
    ];
    const bufs = Array.from({ length: 10_000 }, (_, i) => kinds[i % kinds.length]);
    const t0 = Date.now();
    assert.equal(await sendAll(sock, d.paths.requestSock, bufs.slice(0, 9_000)), 0);
    assert.equal(await sendAll(unbound, d.paths.requestSock, bufs.slice(9_000)), 0);
    const ms = Date.now() - t0;
    await waitFor(() => (replies.length >= 1000 ? true : undefined), 'error replies');
    const codes = new Set(replies.map((r) => r.code));
    for (const c of ['malformed', 'bad-version', 'unknown-type', 'too-large']) assert.ok(codes.has(c), `${c} in ${[...codes]}`);
    assert.ok(replies.every((r) => r.type === 'error' && typeof r.message === 'string' && r.message.length > 0));
    const bad = replies.find((r) => r.code === 'bad-version');
    assert.equal(bad.id, 'old');
    assert.match(bad.message, /unsupported protocol version 99/);
    const pf = await preflight(d.paths, 'ls');
    assert.equal(pf.type, 'preflight');
    assert.ok(d.child.exitCode === null, 'daemon alive');
    assert.ok(ms < 60_000);
  } finally {
    sock.close();
    unbound.close();
    await d.stop();
    d.te.cleanup();
  }
});

test('50 concurrent clients x 100 requests: no lost or crossed replies; a retried id is handled once', async () => {
  const te = tempEnv();
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(
    join(te.env.GATE_HOME, 'rules', 'r.rules'),
    'prefix_rule(pattern=["rm"], decision="forbidden")\nprefix_rule(pattern=["make"], decision="allow")\n',
  );
  const d = await startDaemon({ te, args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  const shell = runShell();
  try {
    const clients = Array.from({ length: 50 }, () => new TestClient(d.paths));
    const t0 = Date.now();
    // each client: one pre-flight (its argv comes back), then exec checks whose answers differ by program,
    // so a reply delivered to the wrong request would show
    const expected: Record<string, unknown> = {
      rm: { type: 'Deny', reason: 'Execution forbidden by policy' },
      make: { type: 'Escalate', execution: { type: 'Unsandboxed' } },
      ls: { type: 'Run' },
    };
    const progs = Object.keys(expected);
    const counts = await Promise.all(
      clients.map(async (c, ci) => {
        const pf: any = await c.request({
          type: 'preflight',
          shell: 'bash',
          flag: '-c',
          script: `echo c${ci}`,
          cwd: '/tmp',
          pid: process.pid,
          sandbox_permissions: 'use_default',
        });
        assert.deepEqual(pf.subcommands[0].argv, ['echo', `c${ci}`]);
        let ok = 1;
        for (let i = 1; i < 100; i++) {
          const prog = progs[(ci + i) % progs.length];
          const r: any = await c.request({
            type: 'exec',
            run_id: pf.run_id,
            program: `/usr/bin/${prog}`,
            argv: [prog, `c${ci}-${i}`],
            cwd: '/tmp',
            pid: process.pid,
            // the asker as the daemon sees it (what a run's supervisor adds): the run's own shell, so the
            // command is the model's and an allow rule may take it out of the sandbox (issue 29)
            host_pid: shell.pid,
          });
          assert.deepEqual(r.action, expected[prog], `reply to ${prog} c${ci}-${i}`);
          ok++;
        }
        return ok;
      }),
    );
    const ms = Date.now() - t0;
    for (const c of clients) assert.deepEqual(c.stray, [], 'no reply without a waiting request');
    clients.forEach((c) => c.close());
    assert.equal(counts.reduce((a, b) => a + b, 0), 5000);
    process.stderr.write(`# 5000 requests from 50 clients in ${ms} ms\n`);

    // the same id twice (a client's retry racing its answer): one decision, one run, one answer; a retry of
    // an id answered into the client's socket is not handled again, nor answered twice
    const c = RequestClient.open(d.paths);
    let runId: string;
    try {
      const msg = { type: 'preflight', id: 'retry-1', shell: 'bash', flag: '-c', script: 'true', cwd: '/tmp', pid: 1, sandbox_permissions: 'use_default' };
      assert.ok(c.notify(msg));
      const a: any = await c.request(msg);
      runId = a.run_id;
      await assert.rejects(c.request(msg, { timeoutMs: 300, retries: 0 }), /did not answer/);
    } finally {
      c.close();
    }
    const audit = auditLines<Record<string, any>>(join(te.env.GATE_HOME, 'audit.jsonl'));
    assert.equal(audit.filter((r) => r.kind === 'decision' && r.run_id === runId).length, 1);
    assert.equal(audit.filter((r) => r.kind === 'decision').length, 51);
    assert.equal(audit.filter((r) => r.kind === 'exec').length, 4950);
  } finally {
    shell.stop();
    await d.stop();
    te.cleanup();
  }
});

test('past 100,000 answered requests the daemon still answers: remembered ids are forgotten oldest first, never busy', async () => {
  // a sustained ~1,700 requests a second (a `find -exec` over many files) used to turn 'busy' after a minute
  const d = await startDaemon({ args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  const clients = Array.from({ length: 8 }, () => RequestClient.open(d.paths));
  try {
    const types = new Map<string, number>();
    await Promise.all(
      clients.map(async (c) => {
        for (let i = 0; i < 13_000; i++) {
          const r = await c.request({ type: 'ping' }, { retries: 0 });
          types.set(r.type, (types.get(r.type) ?? 0) + 1);
        }
      }),
    );
    assert.deepEqual([...types], [['ack', 104_000]]);
  } finally {
    clients.forEach((c) => c.close());
    await d.stop();
    d.te.cleanup();
  }
});

test('a 1 MiB script goes over stream.sock and is decided; an answer too large for a datagram is kept for the stream resend', async () => {
  const d = await startDaemon({ args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  try {
    const script = 'echo ' + 'a'.repeat(1 << 20);
    const r = await preflight(d.paths, script);
    assert.equal(r.type, 'preflight');
    assert.ok(r.subcommands[0].argv.join(' ').length > 1 << 20);
    // a request that fits a datagram whose answer does not: the client resends it on stream.sock and gets the
    // answer the daemon kept for that id (decided once)
    const many = Array.from({ length: 3000 }, (_, i) => `echo w${i}`).join('; ');
    assert.ok(many.length < 60_000);
    const big = await preflight(d.paths, many);
    assert.ok(big.subcommands.length >= 3000);
    const audit = auditLines<Record<string, any>>(join(d.te.env.GATE_HOME, 'audit.jsonl'));
    assert.equal(audit.filter((a) => a.kind === 'decision' && a.run_id === big.run_id).length, big.subcommands.length);
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});

test('daemon killed mid-prompt: the audit log has only whole lines and the rules file is intact', async () => {
  const te = tempEnv();
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  const rules = 'prefix_rule(pattern=["make"], decision="prompt")\n';
  writeFileSync(join(te.env.GATE_HOME, 'rules', 'r.rules'), rules);
  const d = await startDaemon({ te, args: ['--approval-policy', 'on-request'] });
  const c = await approveConsole(te.env, 'k');
  try {
    const pending = preflight(d.paths, 'make a; make b; make c').catch((e: Error) => e);
    await c.next('prompt');
    d.child.kill('SIGKILL');
    const r = await pending;
    assert.ok(r instanceof Error, 'the client sees the failure');
    assert.match(r.message, /gate daemon/);
    const text = readFileSync(join(te.env.GATE_HOME, 'audit.jsonl'), 'utf8');
    assert.ok(text.endsWith('\n'));
    for (const line of text.trim().split('\n')) JSON.parse(line);
    assert.equal(readFileSync(join(te.env.GATE_HOME, 'rules', 'r.rules'), 'utf8'), rules);
  } finally {
    await c.close();
    await d.stop();
    te.cleanup();
  }
});
