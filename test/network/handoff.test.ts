/**
 * The bridge's listener handed to the daemon (src/network/listener-handoff.ts, shims/gate-netbridge.c):
 * inside a run's sandbox no process holds the listening socket on 127.0.0.1:3128 once the bridge handed it
 * over, and connections to it still reach the proxy (the daemon accepts them itself: no bridge between a
 * tunnel's client and the relay). The daemon takes only a listener of another network namespace than its
 * own: one of the host's network, or something else than a listener, sent on a run's listen.sock is
 * refused ('N') and nothing listens on it. With GATE_NET_HANDOFF=off the bridge keeps relaying (the path
 * before the hand-over) and connections work too. Real daemon, gate-sh, bubblewrap; servers on 127.0.0.x.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startDaemon, track, waitFor, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { RULES, type World, worldAndDaemon } from './servers.js';

const CONFIG = '[sandbox_workspace_write]\nnetwork_access = "rules"\n';

let w: World;
let d: DaemonProc;
let close = async (): Promise<void> => {};

before(async () => {
  ({ w, d, close } = await worldAndDaemon('gneth-', () => ({ config: CONFIG, rules: RULES, workspace: 'ws', env: { GATE_NET_HANDOFF: 'on' } })));
});

after(() => close());

// inside the sandbox: the listener's inode (/proc/net/tcp, 127.0.0.1:3128 listening), then every process's
// descriptors; waits (no sleep: until the event) for the bridge to let go of it
const HOLDERS = `
import os
def listener():
    for l in open("/proc/net/tcp").read().splitlines()[1:]:
        f = l.split()
        if f[1] == "0100007F:0C38" and f[3] == "0A":
            return f[9]
def holders(ino):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            for fd in os.listdir("/proc/%s/fd" % p):
                if os.readlink("/proc/%s/fd/%s" % (p, fd)) == "socket:[%s]" % ino: out.append(p)
        except OSError: pass
    return out
ino = listener()
print("listening" if ino else "no listener")
while holders(ino): pass
print("held by no process of the sandbox")
`;

test('the bridge hands its listener to the daemon: nothing in the sandbox holds it, and a CONNECT tunnel and plain http still work', { timeout: 120_000 }, async () => {
  const r = await run(
    GATE_SH,
    ['-c', `python3 -c '${HOLDERS}' && curl -sS -f -p -o /dev/null -w '%{size_download}\\n' http://web.test:${w.webPort}/big/8 && curl -sS -f http://web.test:${w.webPort}/hello`],
    { env: d.env, cwd: d.ws, timeoutMs: 100_000 },
  );
  assert.equal(r.stdout, `listening\nheld by no process of the sandbox\n${8 << 20}\nhello from web.test via web.test:${w.webPort}\n`, r.stderr);
});

/** A python3 process that sends one descriptor (what `kind` makes) on `sock` and prints the one-byte answer. */
function sendOne(sock: string, kind: 'host-listener' | 'file'): Promise<string> {
  const py = [
    'import socket, sys',
    `kind = "${kind}"`,
    'if kind == "host-listener":',
    '    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(); fd = l.fileno()',
    'else:',
    '    fd = open("/dev/null").fileno()',
    'c = socket.socket(socket.AF_UNIX)',
    `c.connect("${sock}")`,
    'socket.send_fds(c, [b"L"], [fd])',
    'print(c.recv(1).decode())',
  ].join('\n');
  return run('/usr/bin/python3', ['-c', py], { env: d.env, timeoutMs: 30_000 }).then((r) => r.stdout.trim() + r.stderr);
}

test("a run's listen.sock takes no listener of the daemon's own network namespace, nor anything but a listener", { timeout: 60_000 }, async () => {
  // a run holding its proxy open (waits on its stdin)
  const c = track(spawn(GATE_SH, ['-c', 'read x'], { env: d.env, cwd: d.ws, stdio: ['pipe', 'ignore', 'ignore'] }));
  const gone = new Promise<void>((r) => c.once('exit', () => r()));
  try {
    const net = join(d.paths.sessionDir, 'net');
    const id = await waitFor(() => {
      try {
        return readdirSync(net).find((n) => readdirSync(join(net, n)).includes('listen.sock'));
      } catch {
        return undefined;
      }
    }, 'a run listen.sock');
    const sock = join(net, id, 'listen.sock');
    assert.equal(await sendOne(sock, 'host-listener'), 'N');
    assert.equal(await sendOne(sock, 'file'), 'N');
  } finally {
    c.stdin!.end('\n');
    await gone;
  }
});

test('GATE_NET_HANDOFF=off: the bridge keeps its listener and relays, and connections work as well', { timeout: 120_000 }, async () => {
  const off = await startDaemon({ config: CONFIG, rules: RULES, workspace: 'ws', args: ['--test-resolver', w.hostsFile], env: { GATE_NET_HANDOFF: 'off' } });
  try {
    const r = await run(
      GATE_SH,
      ['-c', `curl -sS -f -p -o /dev/null -w '%{size_download}\\n' http://web.test:${w.webPort}/big/8 && curl -sS -f http://web.test:${w.webPort}/hello`],
      { env: off.env, cwd: off.ws, timeoutMs: 100_000 },
    );
    assert.equal(r.stdout, `${8 << 20}\nhello from web.test via web.test:${w.webPort}\n`, r.stderr);
  } finally {
    await off.close();
  }
});

// inside the sandbox: refusals one after the other (plain http, then CONNECT, fifty times), and after each
// one is read, a line of the client's own on stderr
const ORDER = (port: number) => `
import socket, sys
for i in range(100):
    s = socket.create_connection(("127.0.0.1", 3128))
    if i % 2 == 0:
        s.sendall(b"GET http://denied.test:${port}/hello HTTP/1.1\\r\\nHost: denied.test:${port}\\r\\n\\r\\n")
    else:
        s.sendall(b"CONNECT denied.test:${port} HTTP/1.1\\r\\nHost: denied.test:${port}\\r\\n\\r\\n")
    a = s.recv(65536)
    assert a.startswith(b"HTTP/1.1 403"), a
    sys.stderr.write("client saw refusal %d\\n" % i)
    sys.stderr.flush()
    s.close()
`;

/** every `client saw refusal i` comes after the (i+1)th denial line */
function inOrder(stderr: string): void {
  let denied = 0;
  let saw = 0;
  for (const l of stderr.split('\n')) {
    if (l.startsWith('gate-sh: network: denied denied.test:')) denied++;
    const m = /^client saw refusal (\d+)$/.exec(l);
    if (m) {
      assert.equal(Number(m[1]), saw++);
      assert.ok(denied > Number(m[1]), `"${l}" came before its denial line:\n${stderr}`);
    }
  }
  assert.deepEqual([denied, saw], [100, 100], stderr);
}

test("with the hand-over, each denial's line is on the run's stderr before the client sees the refusal", { timeout: 120_000 }, async () => {
  const r = await run(GATE_SH, ['-c', `python3 -c '${ORDER(w.webPort)}'`], { env: d.env, cwd: d.ws, timeoutMs: 100_000 });
  assert.equal(r.code, 0, r.stderr);
  inOrder(r.stderr);
});

test('with the bridge relaying, the same', { timeout: 120_000 }, async () => {
  const off = await startDaemon({ config: CONFIG, rules: RULES, workspace: 'ws', args: ['--test-resolver', w.hostsFile], env: { GATE_NET_HANDOFF: 'off' } });
  try {
    const r = await run(GATE_SH, ['-c', `python3 -c '${ORDER(w.webPort)}'`], { env: off.env, cwd: off.ws, timeoutMs: 100_000 });
    assert.equal(r.code, 0, r.stderr);
    inOrder(r.stderr);
  } finally {
    await off.close();
  }
});
