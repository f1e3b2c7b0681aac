/**
 * Network "rules" end to end (issue 33): a real daemon with `network_access = "rules"` and the test
 * resolver, real gate-sh, real bubblewrap, the bridge and the proxy; servers on 127.0.0.x only
 * (servers.ts). Allowed hosts work through curl (http, https via CONNECT, SOCKS5), node fetch, python
 * urllib, git clone over http and npm install from a static registry; denied hosts fail with the reason
 * (403 body, curl's status, the run's stderr); what ignores the proxy has no route and no DNS; a name
 * resolving to 127.0.0.1 needs a rule; the TLS server name must be the CONNECT host; another run's and
 * another session's proxy sockets are out of reach. Each denial also shows the allowed case running.
 */
import { strict as assert } from 'node:assert';
import { createSocket } from 'node:dgram';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, track, waitFor, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { RULES, type World, worldAndDaemon } from './servers.js';

const CONFIG = '[sandbox_workspace_write]\nnetwork_access = "rules"\n';

let w: World;
let d: DaemonProc;
let close = async (): Promise<void> => {};

before(async () => {
  ({ w, d, close } = await worldAndDaemon('gnet-', () => ({ config: CONFIG, rules: RULES, workspace: 'ws' })));
});

after(() => close());

/** A gate-sh run that waits on its stdin until released: its proxy stays open meanwhile. */
function holding(p: DaemonProc): { release(): Promise<void> } {
  const c = track(spawn(GATE_SH, ['-c', 'read x'], { env: p.env, cwd: p.ws, stdio: ['pipe', 'ignore', 'ignore'] }));
  const gone = new Promise<void>((r) => c.once('exit', () => r()));
  return {
    release: async () => {
      c.stdin!.end('\n');
      await gone;
    },
  };
}

const sh = (script: string, o: { env?: Record<string, string>; timeoutMs?: number } = {}) =>
  run(GATE_SH, ['-c', script], { env: { ...d.env, ...o.env }, cwd: d.ws, timeoutMs: o.timeoutMs ?? 60_000 });

describe('allowed hosts work through the proxy', () => {
  test('curl: plain http (HTTP_PROXY), https through CONNECT (HTTPS_PROXY), and SOCKS5 with names resolved by the proxy', async () => {
    const r = await sh(
      `curl -sS -f http://web.test:${w.webPort}/hello && curl -sS -f --cacert ${w.caFile} https://tls.test:${w.tlsPort}/ && ` +
        `curl -sS -f -x "$ALL_PROXY" http://web.test:${w.webPort}/hello && echo "$ALL_PROXY"`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /hello from web\.test via web\.test:\d+\n/);
    assert.match(r.stdout, /hello over tls, SNI tls\.test\n/);
    assert.match(r.stdout, /socks5h:\/\/127\.0\.0\.1:\d+\n$/);
    assert.equal(r.stderr, '');
  });

  test('python urllib (http and https) reads the proxy variables', async () => {
    const py = [
      'import ssl, urllib.request',
      `print(urllib.request.urlopen("http://web.test:${w.webPort}/hello").read().decode(), end="")`,
      `ctx = ssl.create_default_context(cafile="${w.caFile}")`,
      `print(urllib.request.urlopen("https://tls.test:${w.tlsPort}/", context=ctx).read().decode(), end="")`,
    ].join('\n');
    const r = await sh(`python3 -c '${py}'`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /hello from web\.test/);
    assert.match(r.stdout, /hello over tls, SNI tls\.test/);
  });

  test("node fetch: on Node 20 through undici's EnvHttpProxyAgent (Node >= 24 reads the variables itself: NODE_USE_ENV_PROXY=1)", async () => {
    const js =
      `const u = require(${JSON.stringify(join(ROOT, 'node_modules', 'undici'))}); u.setGlobalDispatcher(new u.EnvHttpProxyAgent()); ` +
      `fetch("http://web.test:${w.webPort}/hello").then((r) => r.text()).then((t) => process.stdout.write(t))`;
    const r = await sh(`node -e '${js}'`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /hello from web\.test/);
  });

  test('git clone over http (a dumb-http repository)', async () => {
    const r = await sh(`git clone -q http://web.test:${w.webPort}${w.gitPath} cloned && cat cloned/README`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, w.gitText);
  });

  test("a tunnel's bytes (CONNECT, SOCKS5) arrive whole past Node, through the daemon's relay, and the audit counts them", async () => {
    const size = 8 << 20;
    const r = await sh(
      `curl -sS -p -o a.bin -w '%{size_download}\\n' http://web.test:${w.webPort}/big/8 && ` +
        `curl -sS -x "$ALL_PROXY" -o b.bin -w '%{size_download}\\n' http://web.test:${w.webPort}/big/8 && ` +
        `cmp a.bin b.bin && head -c ${size} /dev/zero | tr '\\0' x | cmp - a.bin && echo same`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${size}\n${size}\n` + 'same\n');
    // one "closed" record per tunnel, with the bytes the relay carried (the answer's headers beyond the body)
    const closed = await waitFor(() => {
      const recs = readFileSync(join(d.env.GATE_HOME, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((x) => x.kind === 'network' && x.detail === 'closed' && x.bytes_down > size);
      const https = recs.filter((x) => x.protocol === 'https');
      const socks = recs.filter((x) => x.protocol === 'socks5_tcp');
      return https.length && socks.length ? [https.at(-1), socks.at(-1)] : undefined;
    }, 'the tunnels\' close records');
    for (const c of closed) {
      assert.ok(c.bytes_down < size + 4096, `bytes down ${c.bytes_down}`);
      assert.ok(c.bytes_up > 50 && c.bytes_up < 4096, `bytes up ${c.bytes_up}`);
      assert.equal(c.error, undefined);
    }
  });

  test('a run that ends in the middle of a tunnel ends it: the relay lets go, and the close record says why', async () => {
    // the download is slowed so that the run ends first; the run waits (no sleep) until bytes arrived
    const r = await sh(
      `curl -sS -p --limit-rate 2M -o part.bin http://web.test:${w.webPort}/big/64 2>/dev/null & ` +
        'while [ ! -s part.bin ]; do :; done; echo started; echo "$GATE_RUN"',
    );
    const [said, runId] = r.stdout.split('\n');
    assert.equal(said, 'started', r.stderr);
    // this run's record (an earlier test's tunnels closed cleanly)
    const closed = await waitFor(() => {
      const recs = readFileSync(join(d.env.GATE_HOME, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((x) => x.kind === 'network' && x.detail === 'closed' && x.run_id === runId && x.protocol === 'https' && x.bytes_down > 0 && x.bytes_down < 64 << 20);
      return recs.at(-1);
    }, 'the cut tunnel\'s close record');
    assert.match(closed.error ?? '', /^relay: /);
  });

  test('npm install of a package from a static registry', async () => {
    const proj = join(d.ws, 'proj');
    mkdirSync(proj, { recursive: true });
    writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'proj', version: '1.0.0', private: true }));
    const r = await sh(
      `cd proj && npm install --no-audit --no-fund --no-update-notifier --registry http://web.test:${w.webPort}${w.npmPath} ${w.npmPackage} >/dev/null && ` +
        `node -e 'console.log(require("${w.npmPackage}"))'`,
      { timeoutMs: 120_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'tiny package loaded\n');
  });
});

describe('denials reach the client in its own protocol and the run says why on stderr', () => {
  test('plain http: 403 with the reason as body and header; curl -f fails; the stderr line names host, port and reason', async () => {
    const r = await sh(
      `curl -sS -f http://web.test:${w.webPort}/hello; curl -sS -D - http://stranger.test:${w.webPort}/hello; ` +
        `curl -sS -f http://denied.test:${w.webPort}/hello; echo "curl -f: $?"`,
    );
    assert.match(r.stdout, /^hello from web\.test/, 'the allowed host works');
    assert.match(r.stdout, /HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(r.stdout, /X-Gate-Sh-Reason: [^\r\n]*no network_rule or allowed_domains entry allows stranger\.test\r\n/i);
    assert.match(r.stdout, /\r\n\r\ngate-sh: network: [^\n]*no network_rule or allowed_domains entry allows stranger\.test\n/);
    assert.match(r.stdout, /curl -f: 22\n/);
    assert.match(r.stderr, new RegExp(`^gate-sh: network: denied stranger\\.test:${w.webPort}: [^\\n]*no network_rule or allowed_domains entry allows stranger\\.test$`, 'm'));
    assert.match(r.stderr, new RegExp(`^gate-sh: network: denied denied\\.test:${w.webPort}: a network_rule forbids denied\\.test \\([^)]*default\\.rules:\\d+\\)$`, 'm'));
  });

  test('https: the CONNECT is refused with 403 (curl exits 56) and the reason', async () => {
    const r = await sh(`curl -sS --cacert ${w.caFile} https://tls.test:${w.tlsPort}/ && curl -sS --cacert ${w.caFile} https://other.test:${w.tlsPort}/; echo "curl: $?"`);
    assert.match(r.stdout, /hello over tls, SNI tls\.test\n/);
    assert.match(r.stdout, /curl: 56\n/);
    assert.match(r.stderr, /CONNECT tunnel failed, response 403/);
    assert.match(r.stderr, new RegExp(`gate-sh: network: denied other\\.test:${w.tlsPort}: [^\\n]*allows other\\.test`));
  });

  test('SOCKS5: a denial is a SOCKS failure reply ("not allowed by ruleset"); UDP ASSOCIATE is refused with its reason', async () => {
    const py = [
      'import socket, struct',
      'def ask(cmd, host, port):',
      '    s = socket.create_connection(("127.0.0.1", 3128))',
      '    s.sendall(b"\\x05\\x01\\x00"); assert s.recv(2) == b"\\x05\\x00"',
      '    s.sendall(b"\\x05" + bytes([cmd]) + b"\\x00\\x03" + bytes([len(host)]) + host.encode() + struct.pack(">H", port))',
      '    return s.recv(10)[1]',
      `print("allowed", ask(1, "web.test", ${w.webPort}))`,
      `print("denied", ask(1, "stranger.test", ${w.webPort}))`,
      `print("udp", ask(3, "web.test", ${w.webPort}))`,
    ].join('\n');
    const r = await sh(`python3 -c '${py}'`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'allowed 0\ndenied 2\nudp 7\n');
    assert.match(r.stderr, /denied stranger\.test:\d+: [^\n]*allows stranger\.test/);
    assert.match(r.stderr, /SOCKS5 UDP ASSOCIATE is not supported by gate-sh's proxy/);
  });

  test('a name that does not resolve fails closed (502, the reason)', async () => {
    const r = await sh(`curl -sS -f http://web.test:${w.webPort}/hello; curl -sS http://nowhere.test:${w.webPort}/`);
    assert.match(r.stdout, /^hello from web\.test/);
    assert.match(r.stdout, /gate-sh: network: cannot resolve nowhere\.test: no such name\n/);
    assert.match(r.stderr, /denied nowhere\.test:\d+: cannot resolve nowhere\.test/);
  });
});

describe('never wider by accident', () => {
  test('a raw socket that ignores the proxy has no route, and no DNS reaches a resolver outside', async () => {
    // a resolver-like UDP server on the host: answered from the host, unreachable from the sandbox
    const udp = createSocket('udp4');
    udp.on('message', (m, from) => udp.send(m, from.port, from.address));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.5', r));
    const udpPort = udp.address().port;
    try {
      const ask = [
        'import socket, sys',
        'u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3)',
        'try:',
        `    u.sendto(b"q", ("127.0.0.5", ${udpPort})); print("dns answered", u.recv(10))`,
        'except OSError as e: print("dns failed:", type(e).__name__)',
        'try:',
        `    socket.create_connection(("127.0.0.2", ${w.webPort}), timeout=3); print("tcp connected")`,
        'except OSError as e: print("tcp failed:", type(e).__name__)',
      ].join('\n');
      const host = await run('python3', ['-c', ask], { env: d.env });
      assert.equal(host.stdout, "dns answered b'q'\ntcp connected\n", 'outside the sandbox both work');
      const r = await sh(`curl -sS -f http://web.test:${w.webPort}/hello; python3 -c '${ask}'; curl -sS --noproxy '*' http://web.test:${w.webPort}/hello; echo "curl: $?"; grep -c . /proc/net/route`);
      assert.match(r.stdout, /^hello from web\.test/, 'through the proxy it works');
      assert.match(r.stdout, /dns failed: \w+\ntcp failed: ConnectionRefusedError\n/);
      assert.match(r.stdout, /curl: 6\n/, 'without the proxy the name does not resolve');
      assert.match(r.stdout, /\n1\n$/, 'no route but the header line');
    } finally {
      udp.close();
    }
  });

  test('a name resolving to 127.0.0.1 is refused without a rule naming it, and reached with one', async () => {
    const r = await sh(`curl -sS -f http://loopok.test:${w.loopPort}/; curl -sS http://loop.test:${w.loopPort}/; curl -sS --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${w.loopPort}/`);
    assert.match(r.stdout, /^hello from the host loopback\n/);
    assert.match(r.stdout, /gate-sh: network: [^\n]*allows loop\.test\n/);
    assert.match(r.stdout, /gate-sh: network: 127\.0\.0\.1 is a loopback address[^\n]*\n/);
    assert.match(r.stderr, /denied loop\.test:\d+: [^\n]*allows loop\.test/);
  });

  test('TLS fronting: a ClientHello naming another host than the CONNECT is refused (the certificate would fit both)', async () => {
    const py = (name: string) =>
      [
        'import socket, ssl',
        's = socket.create_connection(("127.0.0.1", 3128))',
        `s.sendall(b"CONNECT tls.test:${w.tlsPort} HTTP/1.1\\r\\nHost: tls.test:${w.tlsPort}\\r\\n\\r\\n")`,
        'assert s.recv(4096).startswith(b"HTTP/1.1 200")',
        `ctx = ssl.create_default_context(cafile="${w.caFile}")`,
        'try:',
        `    t = ctx.wrap_socket(s, server_hostname="${name}")`,
        `    t.sendall(b"GET / HTTP/1.1\\r\\nHost: ${name}\\r\\nConnection: close\\r\\n\\r\\n"); print(t.recv(4096).decode().split("\\r\\n\\r\\n")[1], end="")`,
        'except ssl.SSLError as e: print("refused:", e.reason)',
      ].join('\n');
    const r = await sh(`python3 -c '${py('tls.test')}'; python3 -c '${py('other.test')}'`);
    assert.equal(r.stdout, 'hello over tls, SNI tls.test\nrefused: TLSV1_UNRECOGNIZED_NAME\n');
    assert.match(r.stderr, /denied tls\.test:\d+: the TLS server name other\.test is not the host tls\.test asked for \(no fronting\)/);
  });

  test('plain-http fronting: a Host header naming another host than the request line is refused', async () => {
    const r = await sh(`curl -sS http://web.test:${w.webPort}/hello; curl -sS -H "Host: stranger.test:${w.webPort}" http://web.test:${w.webPort}/hello`);
    assert.match(r.stdout, /^hello from web\.test/);
    assert.match(r.stdout, /gate-sh: network: the Host header names stranger\.test:\d+, not the requested web\.test:\d+ \(no fronting\)\n/);
  });

  test("another run's proxy socket and another session's are out of reach; the run's own works", async () => {
    // another session with network rules, one run of it holding its proxy open
    const other = await startDaemon({ config: CONFIG, rules: RULES, workspace: 'ws', args: ['--test-resolver', w.hostsFile] });
    const holdOther = holding(other);
    const holdSame = holding(d);
    try {
      const socketOf = async (p: DaemonProc) => {
        const net = join(p.paths.sessionDir, 'net');
        const id = await waitFor(() => {
          try {
            return readdirSync(net)[0];
          } catch {
            return undefined;
          }
        }, 'a run proxy');
        return join(net, id, 'proxy.sock');
      };
      const otherSock = await socketOf(other);
      const sameSock = await socketOf(d);
      const py = [
        'import os, socket, sys',
        'def reach(p):',
        '    s = socket.socket(socket.AF_UNIX)',
        '    try: s.connect(p); return "reached"',
        '    except OSError as e: return type(e).__name__',
        `own = os.environ["GATE_RUN"]`,
        `print("own", reach("${d.paths.sessionDir}/net/" + own + "/proxy.sock"))`,
        `print("same session", reach("${sameSock}"))`,
        `print("other session", reach("${otherSock}"))`,
        `print("approval", reach("${d.paths.approvalSock}"))`,
      ].join('\n');
      const r = await sh(`python3 -c '${py}'`);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n');
      assert.equal(lines[0], 'own reached');
      assert.notEqual(lines[1], 'same session reached');
      assert.notEqual(lines[2], 'other session reached');
      assert.notEqual(lines[3], 'approval reached');
    } finally {
      await holdOther.release();
      await holdSame.release();
      await other.close();
    }
  });
});
