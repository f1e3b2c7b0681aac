/**
 * Issue 28, finding 6: forged `exec-reused` audit records. A gated script sends the daemon exec-reused
 * notices from inside its sandbox, as the red team did (2,000 of them there): before the fix each became an
 * "allow / Run / reused" record of an exec that never happened. Now the request channel takes no such
 * notice, and the supervisors' notice socket lies in the runtime folder every sandbox hides; the real
 * supervisor's notice (a reused exec whose record is too long for it to write itself) is still recorded.
 * In each sandbox mode. Real daemon, real gate-sh, real supervisor, bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gateSh, execGateOptions } from '../exec-gate/helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

const N = 300;

/** python3 forge.py N NOTICE_SOCK: N exec-reused notices on the request channel, then one at the notice
 * socket's path; prints how many were sent and what sending to the notice socket said. */
const FORGE = `import json, os, socket, sys
n, notice = int(sys.argv[1]), sys.argv[2]
e = os.environ
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
me = "%s/forge-%d.sock" % (e["GATE_CLIENT_DIR"], os.getpid())
s.bind(me)
def msg(i):
    return json.dumps({"v": 1, "id": "forged-%d-%d" % (os.getpid(), i), "type": "exec-reused", "grant": "x" * 32, "run_id": e["GATE_RUN"], "program": "/usr/bin/forged-%d" % i, "argv": ["forged-%d" % i], "cwd": "/", "pid": 1, "env": {}}).encode()
sent = 0
for i in range(n):
    while True:
        try:
            s.sendto(msg(i), e["GATE_REQUEST_SOCK"])
            sent += 1
            break
        except BlockingIOError:
            pass
try:
    s.sendto(msg(n), notice)
    print("notice: sent")
except OSError as x:
    print("notice: %s" % x.strerror)
os.unlink(me)
print("sent %d" % sent)
`;

interface Rec { kind: string; argv?: string[]; reused?: boolean; source?: string }

function audit(path: string): Rec[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
}

for (const mode of ['workspace-write', 'read-only', 'danger-full-access'] as const)
  test(`${mode}: exec-reused notices from inside the sandbox write no audit record; the supervisor's still does`, { timeout: 120_000 }, async (t) => {
    const rig = await startDaemon(
      execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")', 'prefix_rule(pattern=["curl"], decision="forbidden")'], env: { GATE_SANDBOX_MODE: mode } }),
    );
    t.after(async () => (killAll(), rig.close()));
    writeFileSync(join(rig.ws, 'forge.py'), FORGE);
    const r = await gateSh(rig, `python3 ./forge.py ${N} ${join(rig.paths.sessionDir, 'notice.sock')}`, { timeoutMs: 60_000 });
    assert.match(r.stdout, new RegExp(`^sent ${N}$`, 'm'), r.stdout + r.stderr);
    // hidden with the runtime folder: not even there to send to (danger-full-access hides nothing yet: the
    // notice sent there names no grant the daemon gave, and is refused the same)
    if (mode !== 'danger-full-access') assert.match(r.stdout, /^notice: No such file or directory$/m, r.stdout);
    // the allowed path: the real supervisor tells of a reused exec whose record is over a page (tool's
    // second exec reuses its first's Run); that record comes through the daemon
    const tool = join(rig.ws, 'tool');
    copyFileSync('/bin/true', tool);
    chmodSync(tool, 0o755);
    const ok = await gateSh(rig, `${tool} 1; ${tool} "$(printf '%05000d' 0)"; echo ok`, { timeoutMs: 60_000 });
    assert.match(ok.stdout, /^ok$/m, ok.stderr);
    await waitFor(() => audit(rig.paths.auditLog).some((x) => x.reused && x.argv?.[1]?.length === 5000) || undefined, "the supervisor's notice recorded");
    // the forged notices reached the daemon before it: none is in the log
    const forged = audit(rig.paths.auditLog).filter((x) => x.argv?.some((a) => a.startsWith('forged-')) || x.argv?.[0]?.includes('/usr/bin/forged-'));
    assert.equal(forged.length, 0, `${forged.length} forged records, e.g. ${JSON.stringify(forged[0])}`);
    assert.equal(audit(rig.paths.auditLog).filter((x) => x.source === 'reuse:unverified').length, 0);
  });
