/**
 * Plain HTTP through the proxy, one request after another on one kept-alive connection (issue 33): each
 * request is decided on its own, so a second request to another host is refused when that host is
 * denied, even pipelined behind an answer whose body the daemon's relay carries (native/gate_relay.c: the
 * body's length is all it carries, then the connection is Node's again); the bodies arrive whole; a head
 * that two parsers could read two ways (Transfer-Encoding with Content-Length) is refused. Real daemon,
 * gate-sh, bubblewrap and bridge; the client is python's raw socket inside the run, the servers are on
 * 127.0.0.x (servers.ts).
 */
import { strict as assert } from 'node:assert';
import { after, before, test } from 'node:test';
import { GATE_SH } from '../helpers/env.js';
import type { DaemonProc } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';
import { RULES, type World, worldAndDaemon } from './servers.js';

let w: World;
let d: DaemonProc;
let close = async (): Promise<void> => {};

before(async () => {
  ({ w, d, close } = await worldAndDaemon('gnetka-', () => ({
    config: '[sandbox_workspace_write]\nnetwork_access = "rules"\n',
    rules: RULES,
    workspace: 'ws',
  })));
});
after(() => close());

/** python inside the run: REQUESTS (bytes) sent on one connection to the proxy, each answer printed as
 * `<status> <body length> <sha256 of body, first 12>` plus the reason header when there is one */
const client = (requests: string, together: boolean) => `python3 - <<'EOF'
import socket, hashlib
s = socket.create_connection(("127.0.0.1", 3128))
f = s.makefile("rb")
reqs = [r.encode() for r in ${requests}]
def answer():
    status = f.readline()
    if not status:
        print("closed"); return False
    headers = {}
    while True:
        l = f.readline().decode().rstrip("\\r\\n")
        if not l: break
        k, v = l.split(":", 1); headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get("content-length", "0")))
    print(status.split()[1].decode(), len(body), hashlib.sha256(body).hexdigest()[:12], headers.get("x-gate-sh-reason", ""))
    return True
if ${together ? 'True' : 'False'}:
    s.sendall(b"".join(reqs))
    for _ in reqs:
        if not answer(): break
else:
    for r in reqs:
        s.sendall(r)
        if not answer(): break
answer()
EOF`;

const get = (host: string, path: string) => `"GET http://${host}:${w.webPort}${path} HTTP/1.1\\r\\nHost: ${host}:${w.webPort}\\r\\n\\r\\n"`;
const sha = (s: string) => import('node:crypto').then((c) => c.createHash('sha256').update(s).digest('hex').slice(0, 12));

test('one kept-alive connection: each request is decided again; another host, denied, is refused after an allowed answer', { timeout: 60_000 }, async () => {
  const hello = `hello from web.test via web.test:${w.webPort}\n`;
  const r = await run(GATE_SH, ['-c', client(`[${get('web.test', '/hello')}, ${get('web.test', '/hello')}, ${get('denied.test', '/hello')}]`, false)], {
    env: d.env,
    cwd: d.ws,
    timeoutMs: 50_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const h = await sha(hello);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines.slice(0, 2), [`200 ${hello.length} ${h} `, `200 ${hello.length} ${h} `], r.stdout);
  assert.match(lines[2], /^403 \d+ \w+ .*denied\.test/, r.stdout);
  assert.equal(lines[3], 'closed', 'the connection ends with the refusal');
  assert.match(r.stderr, new RegExp(`gate-sh: network: denied denied\\.test:${w.webPort}: `));
});

test('pipelined behind a relayed 1 MiB body: the body arrives whole and the next request, to a denied host, is refused', { timeout: 60_000 }, async () => {
  const r = await run(GATE_SH, ['-c', client(`[${get('web.test', '/big/1')}, ${get('web.test', '/hello')}, ${get('denied.test', '/hello')}]`, true)], {
    env: d.env,
    cwd: d.ws,
    timeoutMs: 50_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], `200 ${1 << 20} ${await sha('x'.repeat(1 << 20))} `, r.stdout);
  assert.match(lines[1], /^200 /, r.stdout);
  assert.match(lines[2], /^403 \d+ \w+ .*denied\.test/, r.stdout);
  assert.match(r.stderr, new RegExp(`gate-sh: network: denied denied\\.test:${w.webPort}: `));
});

test('a request with both Transfer-Encoding and Content-Length, or an authority read two ways, is refused (400) before anything is decided', { timeout: 60_000 }, async () => {
  const smuggle = `"POST http://web.test:${w.webPort}/hello HTTP/1.1\\r\\nHost: web.test:${w.webPort}\\r\\nContent-Length: 5\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n"`;
  const r = await run(GATE_SH, ['-c', client(`[${get('web.test', '/hello')}, ${smuggle}]`, false)], { env: d.env, cwd: d.ws, timeoutMs: 50_000 });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], /^200 /, r.stdout);
  assert.match(lines[1], /^400 \d+ \w+ both Transfer-Encoding and Content-Length/, r.stdout);
  // an authority URL parsers read two ways (userinfo, a backslash) is refused too
  for (const auth of [`web.test:${w.webPort}@denied.test`, `web.test\\\\@denied.test`]) {
    const odd = `"GET http://${auth}/hello HTTP/1.1\\r\\nHost: web.test:${w.webPort}\\r\\n\\r\\n"`;
    const o = await run(GATE_SH, ['-c', client(`[${odd}]`, false)], { env: d.env, cwd: d.ws, timeoutMs: 50_000 });
    assert.match(o.stdout, /^400 /, `${auth}: ${o.stdout}${o.stderr}`);
  }
});
