/**
 * The escalation runner on its own socket (real addon, real bubblewrap): TurnDefault and Permissions
 * grants run inside the sandbox module's bwrap argv, Unsandboxed as is; tokens are one-time; a caller
 * without three descriptors or with another cwd is refused. The caller is a python3 process passing its
 * descriptors with SCM_RIGHTS, as libgate.so does. No daemon answers here, so the commands use shell
 * builtins only (an exec inside an escalated run is gated, and would fail closed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { gatePaths } from '../../src/paths/paths.js';
import { EscalationServer } from '../../src/daemon/escalation-runner.js';
import { findBwrap } from '../../src/exec/sandbox-run.js';
import type { EscalationExecution } from '../../src/protocol/action.js';
import { run } from './helpers.js';

const CLIENT = `import json, os, socket, struct, sys
tok, nfds = sys.argv[1], int(sys.argv[2])
body = json.dumps({"token": tok, "env": ["PATH=/usr/bin:/bin", "HOME=/nonexistent"]}).encode()
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(os.environ["ESC_SOCK"])
socket.send_fds(c, [struct.pack("<I", len(body)) + body], [0, 1, 2][:nfds])
data = b""
while True:
    k = c.recv(65536)
    if not k:
        break
    data += k
sys.stdout.flush()
print(json.loads(data[4:].decode()))
`;

test('grants run as decided: Unsandboxed as is, TurnDefault and Permissions inside bubblewrap; refusals', async (t) => {
  const te = tempEnv();
  const paths = gatePaths(te.env);
  mkdirSync(paths.clientDir, { recursive: true, mode: 0o700 });
  const work = join(te.dir, 'w');
  const outside = join(te.dir, 'out');
  mkdirSync(work);
  mkdirSync(outside);
  const logs: string[] = [];
  const server = new EscalationServer({
    paths,
    env: te.env,
    turnPolicy: () => ({ type: 'read-only' }),
    bwrap: () => findBwrap(te.env),
    log: (l) => logs.push(l),
  });
  await server.start();
  t.after(async () => (await server.close(), te.cleanup()));
  const client = join(te.dir, 'client.py');
  writeFileSync(client, CLIENT);
  let n = 0;
  const escalate = async (execution: EscalationExecution, script: string, o: { nfds?: number; cwd?: string; grantCwd?: string } = {}) => {
    const token = `tok-${++n}`;
    server.grant({
      token,
      run_id: 'r-test',
      program: '/bin/sh',
      argv: ['sh', '-c', script],
      cwd: o.grantCwd ?? work,
      execution,
      expires_at: Date.now() + 30_000,
    });
    const r = await run('/usr/bin/python3', [client, token, String(o.nfds ?? 3)], {
      env: { ...te.env, ESC_SOCK: paths.escalateSock },
      cwd: o.cwd ?? work,
      timeoutMs: 20_000,
    });
    return { ...r, token };
  };

  const free = await escalate({ type: 'Unsandboxed' }, `echo hi > ${outside}/free; echo out; echo err >&2; exit 7`);
  assert.equal(free.stdout, "out\n{'exit_status': 7}\n", free.stderr);
  assert.equal(free.stderr, 'err\n');
  assert.ok(existsSync(join(outside, 'free')));

  const turn = await escalate({ type: 'TurnDefault' }, `(: > ${outside}/turn) 2>/dev/null; echo touch=$?`);
  assert.match(turn.stdout, /touch=[12]\n/, turn.stderr); // dash: 2 for a failed redirection
  assert.ok(!existsSync(join(outside, 'turn')), 'TurnDefault (read-only) wrote outside');

  const perms = await escalate(
    { type: 'Permissions', profile: { file_system: { write: [outside] } } },
    `: > ${outside}/perm; echo touch=$?; (: > ${work}/no) 2>/dev/null; echo work=$?`,
  );
  assert.match(perms.stdout, /touch=0/, perms.stderr);
  assert.match(perms.stdout, /work=[12]\n/, perms.stderr);
  assert.ok(existsSync(join(outside, 'perm')));

  // a profile that reads almost nothing still loads the gate: the exec inside meets it (and, with no
  // daemon here, fails closed) instead of running ungated
  const narrow = await escalate(
    { type: 'Permissions', profile: { file_system: { read: [work], write: [outside] } } },
    `touch ${outside}/narrow; echo touch=$?`,
  );
  assert.match(narrow.stdout, /touch=126/, narrow.stderr);
  assert.match(narrow.stderr, /gate-sh: exec gate: touch .*narrow: the gate-sh daemon is not reachable/);
  assert.ok(!existsSync(join(outside, 'narrow')));

  // refusals: one-time tokens, descriptor count, cwd
  const again = await run('/usr/bin/python3', [client, free.token, '3'], { env: { ...te.env, ESC_SOCK: paths.escalateSock }, cwd: work });
  assert.match(again.stdout, /unknown, used or expired escalation token/);
  const two = await escalate({ type: 'Unsandboxed' }, 'echo never', { nfds: 2 });
  assert.match(two.stdout, /expected 3 descriptors/);
  const moved = await escalate({ type: 'Unsandboxed' }, 'echo never', { cwd: outside });
  assert.match(moved.stdout, /the caller runs in .*\/out, but the escalation was decided for .*\/w/);
  assert.doesNotMatch(two.stdout + moved.stdout, /never/);
});
