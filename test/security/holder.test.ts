/**
 * Issue 28, finding 1: a `session-sandbox` request names what the holder runs. A gated script (rules
 * forbidding rm and curl), from inside its sandbox, sends the request the red team sent — its own
 * `mounts` with the key it computes itself — in each sandbox mode: its own program as mounts[0], then the
 * real bubblewrap with host-writing options (`--bind / / --chmod 0666 <host file>`). The holder runs
 * outside every sandbox, as root here: before the fix it ran the script's program there and chmod'ed the
 * host file. Now a request names a key only; the holder builds only the mounts of a plan the daemon made
 * itself, and a gated run's own sandbox (the allowed path) still gets its mounts held. Real daemon, real
 * gate-sh, bubblewrap, holder. Root only (holders make namespaces).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gateSh, execGateOptions } from '../exec-gate/helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

/** python3 attack.py MOUNTS_JSON: the session-sandbox request with those mounts and their key, as
 * src/sandbox/session-join.ts computes it; prints the reply. */
const ATTACK = `import hashlib, json, os, socket, sys
mounts = json.loads(sys.argv[1])
key = hashlib.sha256("\\0".join(["network:host"] + mounts).encode()).hexdigest()
e = os.environ
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
me = "%s/h-%d.sock" % (e["GATE_CLIENT_DIR"], os.getpid())
s.bind(me)
s.settimeout(30)
s.sendto(json.dumps({"v": 1, "id": "holder-%d" % os.getpid(), "type": "session-sandbox", "key": key, "own_network": False, "mounts": mounts}).encode(), e["GATE_REQUEST_SOCK"])
while True:
    r = json.loads(s.recv(65536))
    if r["type"] != "pending":
        break
os.unlink(me)
print(json.dumps(r))
`;

const RULES = ['prefix_rule(pattern=["rm"], decision="forbidden")', 'prefix_rule(pattern=["curl"], decision="forbidden")'];

interface Rec { kind: string; argv?: string[]; detail?: string }

for (const mode of ['workspace-write', 'read-only', 'danger-full-access'] as const) {
  test(`${mode}: a session-sandbox request from inside the sandbox cannot make the holder run its program or write the host`, {
    skip: process.getuid?.() !== 0,
    timeout: 120_000,
  }, async (t) => {
    const rig = await startDaemon(execGateOptions({ rules: RULES, env: { GATE_SANDBOX_MODE: mode } }));
    t.after(async () => (killAll(), rig.close()));
    const outside = join(rig.te.dir, 'outside');
    mkdirSync(outside);
    const pwned = join(outside, 'pwned');
    const victim = join(outside, 'victim');
    writeFileSync(victim, 'secret\n');
    chmodSync(victim, 0o600);
    // the script's own program (written earlier, as a workspace-write run could): it would run as the holder
    const evil = join(rig.ws, 'evil.sh');
    writeFileSync(evil, `#!/bin/sh\nid -u > ${pwned}\nrm -f ${victim}\n`);
    chmodSync(evil, 0o755);
    writeFileSync(join(rig.ws, 'attack.py'), ATTACK);
    const spellings = [
      [evil, '--'],
      ['/usr/bin/bwrap', '--bind', '/', '/', '--chmod', '0666', victim, '--dev', '/dev', '--proc', '/proc'],
    ];
    for (const mounts of spellings) {
      const r = await gateSh(rig, `python3 ./attack.py '${JSON.stringify(mounts)}'`, { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const reply = JSON.parse(r.stdout) as { type: string; join: { mounts?: unknown } | null };
      assert.equal(reply.type, 'session-sandbox', r.stdout);
      // namespaces at most (they give nothing without the privileges to join): never the named mounts
      assert.equal(reply.join?.mounts, undefined, r.stdout);
    }
    assert.ok(!existsSync(pwned), `the holder ran the script's program as uid ${existsSync(pwned) ? readFileSync(pwned, 'utf8').trim() : ''}`);
    assert.ok(existsSync(victim), 'the holder removed a host file');
    assert.equal(statSync(victim).mode & 0o777, 0o600, 'the holder chmod-ed a host file');
    // the allowed path: a gated run's own plan still gets a holder with its mounts held, audited with its argv
    const ok = await gateSh(rig, 'echo ok');
    assert.equal(ok.stdout, 'ok\n', ok.stderr);
    const made = readFileSync(rig.paths.auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Rec)
      .filter((x) => x.kind === 'daemon' && /session sandbox \w+ made/.test(x.detail ?? ''));
    assert.ok(made.length >= 1, 'the holders are audited');
    for (const m of made) assert.ok(!m.argv?.includes(evil) && !m.argv?.includes('--chmod'), JSON.stringify(m));
    // (under danger-full-access a run has no turn sandbox to join: bubblewrap there only hides gate-sh's state)
    if (mode === 'danger-full-access') return;
    const held = made.filter((m) => /mounts held/.test(m.detail ?? ''));
    assert.equal(held.length, 1, JSON.stringify(made));
    const argv = held[0].argv ?? [];
    assert.equal(argv[argv.indexOf('--mounts') + 1], '/usr/bin/bwrap', JSON.stringify(argv));
  });
}
