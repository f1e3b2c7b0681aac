/**
 * The proxy's pure parts and its one pipeline, in process on loopback: which addresses are local
 * (address-ranges.ts), the server name of a real ClientHello (tls-sni.ts, bytes from node:tls), and dial()'s
 * refusal of a local address when the allow does not name the host (an allow from a wildcard or a default),
 * next to the same connection made when it does. The decider here is the contract's other side (types.ts):
 * it answers as h33b's would, and hears every connection's report.
 */
import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'node:test';
import { localRange } from '../../src/network/address-ranges.js';
import { dial } from '../../src/network/dial.js';
import { systemResolver, testResolver, TestResolverError } from '../../src/network/resolve.js';
import { readClientHello } from '../../src/network/tls-sni.js';
import type { ConnectionClosed, ConnectionDecision, NetworkDecider } from '../../src/network/types.js';

test('local ranges (the decider\'s classes): loopback, private (CGNAT too), link-local, unspecified, reserved (multicast, broadcast, NAT64), and IPv4 inside IPv6', () => {
  const cases: [string, string | null][] = [
    ['127.0.0.1', 'loopback'], ['127.5.6.7', 'loopback'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['fd00::1', 'private'],
    ['169.254.169.254', 'link-local'], ['fe80::1', 'link-local'], ['100.64.0.1', 'private'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'],
    ['224.0.0.1', 'reserved'], ['ff02::1', 'reserved'], ['64:ff9b::a00:1', 'reserved'], ['255.255.255.255', 'reserved'],
    ['172.32.0.1', null], ['8.8.8.8', null], ['2001:4860::8888', null], ['not-an-ip', 'not an IP address'],
  ];
  for (const [a, want] of cases) assert.equal(localRange(a), want, a);
});

/** The first bytes node's TLS client sends for this server name (a real ClientHello). */
async function helloFor(servername: string | undefined): Promise<Buffer> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const got = new Promise<Buffer>((resolve) => srv.once('connection', (s: Socket) => s.once('data', (d: Buffer) => (resolve(d), s.destroy()))));
  const c = tlsConnect({ host: '127.0.0.1', port: (srv.address() as AddressInfo).port, servername, rejectUnauthorized: false });
  c.on('error', () => {});
  const hello = await got;
  c.destroy();
  srv.close();
  return hello;
}

test('the server name of a real ClientHello, a partial one, none, and bytes that are not TLS', async () => {
  const hello = await helloFor('Tls.Test');
  assert.deepEqual(readClientHello(hello), { kind: 'hello', serverName: 'tls.test' });
  assert.deepEqual(readClientHello(hello.subarray(0, 40)), { kind: 'incomplete' });
  assert.deepEqual(readClientHello(await helloFor('')), { kind: 'hello', serverName: null });
  assert.deepEqual(readClientHello(Buffer.from('GET / HTTP/1.1\r\n')), { kind: 'not-tls' });
  const broken = Buffer.from(hello);
  broken[5] = 0x02; // a ServerHello where the ClientHello must be
  assert.deepEqual(readClientHello(broken), { kind: 'malformed', why: 'the first handshake message is not a ClientHello' });
  const huge = Buffer.from(hello);
  huge.writeUIntBE(0xffffff, 6, 3); // a hello longer than the proxy reads
  assert.deepEqual(readClientHello(huge), { kind: 'malformed', why: 'the ClientHello is too large' });
});

test('dial: an allow that does not name the host reaches no local address; one that names it does; a denied name is never resolved', async () => {
  // every connection is ended by the test (an open one keeps the process, and so the test file, alive)
  const open = new Set<Socket>();
  const srv = createServer((s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.end('hi');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const reports: ConnectionClosed[] = [];
  const looked: string[] = [];
  const decider = (v: ConnectionDecision): NetworkDecider => ({ decide: async () => v, closed: (c) => reports.push(c) });
  const ctx = (v: ConnectionDecision, notes: string[]) => ({
    runId: 'r-test',
    decider: decider(v),
    resolve: async (h: string) => (looked.push(h), ['127.0.0.1']),
    notify: (l: string) => void notes.push(l),
    signal: new AbortController().signal,
  });
  try {
    const notes: string[] = [];
    const wildcard = await dial('svc.test', port, 'http', ctx({ decision: 'allow', reason: 'a wildcard rule', source: 'rule' }, notes));
    assert.equal(wildcard.ok, false);
    assert.equal(!wildcard.ok && wildcard.reason, 'svc.test resolves to 127.0.0.1 (loopback), which no rule names');
    assert.deepEqual(notes, [`gate-sh: network: denied svc.test:${port}: svc.test resolves to 127.0.0.1 (loopback), which no rule names`]);
    const literal = await dial('127.0.0.1', port, 'https', ctx({ decision: 'allow', reason: 'default', source: 'default' }, []));
    assert.equal(!literal.ok && literal.reason, '127.0.0.1 is a loopback address, which no rule names');

    const named = await dial('svc.test', port, 'http', ctx({ decision: 'allow', reason: 'rule', source: 'rule', namesHost: true }, []));
    assert.ok(named.ok);
    const text = await new Promise<string>((r) => {
      let t = '';
      named.socket.on('data', (d) => (t += d)).on('end', () => r(t));
    });
    named.done();
    named.socket.destroy();
    assert.equal(text, 'hi');
    assert.equal(reports.at(-1)!.bytesDown, 2);
    assert.deepEqual(reports.at(-1)!.request.addresses, ['127.0.0.1']);

    looked.length = 0;
    const denied = await dial('secret.exfil.test', port, 'http', ctx({ decision: 'deny', reason: 'no', source: 'default' }, []));
    assert.equal(denied.ok, false);
    assert.deepEqual(looked, [], 'a denied name is not looked up (no DNS exfiltration)');
  } finally {
    for (const s of open) s.destroy();
    srv.close();
  }
});

test('the test resolver: loopback only, an owner-only file; as_public entries stand for public hosts, nothing else does', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gres-'));
  try {
    const file = (name: string, map: unknown, mode = 0o600): string => {
      const f = join(dir, name);
      writeFileSync(f, JSON.stringify(map));
      chmodSync(f, mode);
      return f;
    };
    const r = testResolver(file('ok.json', { 'a.test': '127.0.0.2', 'B.test.': ['127.0.0.3', '::1'], 'pub.test': { as_public: '127.0.0.4' } }));
    assert.deepEqual(await r('a.test'), ['127.0.0.2']);
    assert.deepEqual(await r('b.test'), ['127.0.0.3', '::1']);
    assert.deepEqual(await r('pub.test'), ['127.0.0.4']);
    await assert.rejects(r('c.test'), /no such name/);
    assert.deepEqual([r.asPublic?.('pub.test'), r.asPublic?.('a.test'), r.asPublic?.('c.test')], [true, false, false]);
    assert.equal(systemResolver.asPublic, undefined, 'the system resolver has no stand-ins');
    for (const [name, map, mode] of [
      ['lan.json', { 'x.test': '10.0.0.1' }, 0o600],
      ['pub-lan.json', { 'x.test': { as_public: '192.168.1.1' } }, 0o600],
      ['pub-extra.json', { 'x.test': { as_public: '127.0.0.2', more: 1 } }, 0o600],
      ['shared.json', { 'x.test': '127.0.0.2' }, 0o622],
    ] as const)
      assert.throws(() => testResolver(file(name, map, mode)), TestResolverError, name);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
