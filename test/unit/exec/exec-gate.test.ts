/** The pure parts: the exec-gate plan step, the escalated run's environment, the wire decoding. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LAUNCHER, LIBGATE, SHIM_BIN, SHIMS_DIR, withExecGate, withPreload, withShimPath } from '../../../src/exec/exec-gate.js';
import { escalationEnv } from '../../../src/daemon/escalation-env.js';
import { decodeWire, isLossy } from '../../../src/protocol/exec-gate-wire.js';
import { gatePaths } from '../../../src/paths/paths.js';

const paths = gatePaths({ XDG_RUNTIME_DIR: '/run/u', GATE_HOME: '/h' });

test('withExecGate: the gate first in LD_PRELOAD and PATH, socket paths, run id, the checked mark', () => {
  const p = withExecGate(
    { program: '/bin/bash', args: ['-c', 'x'], env: { PATH: '/usr/bin:/bin', LD_PRELOAD: '/x.so', GATE_CHECKED: 'stale', GATE_ESCALATE: 'stale' } },
    { paths, runId: 'r-1', parentPid: 42 },
  );
  assert.equal(p.env.LD_PRELOAD, withPreload('/x.so', LIBGATE)); // libgate.so first (a sanitizer build: after its runtime)
  assert.ok(p.env.LD_PRELOAD.endsWith(`${LIBGATE}:/x.so`));
  assert.equal(p.env.PATH, `${SHIM_BIN}:/usr/bin:/bin`);
  assert.equal(p.env.GATE_RUN, 'r-1');
  assert.equal(p.env.GATE_REQUEST_SOCK, '/run/u/gate-sh/default/req/request.sock');
  assert.equal(p.env.GATE_ESCALATE_SOCK, '/run/u/gate-sh/default/req/escalate.sock');
  assert.equal(p.env.GATE_CLIENT_DIR, '/run/u/gate-sh/default/req/c');
  // started by the kernel layer's launcher, whose supervisor is the program's parent: the run's own mark
  assert.equal(p.env.GATE_CHECKED, '0:/bin/bash');
  assert.equal(p.program, LAUNCHER);
  assert.deepEqual(p.args, ['/bin/bash', '-c', 'x']);
  const plain = withExecGate({ program: '/bin/bash', args: ['-c', 'x'], env: {} }, { paths, runId: 'r-1', parentPid: 42, kernel: false });
  assert.equal(plain.env.GATE_CHECKED, '42:/bin/bash');
  assert.equal(plain.program, '/bin/bash');
  assert.equal(p.env.GATE_ESCALATE, undefined);
  assert.equal(p.env.GATE_THEN, undefined);
  // applied twice: still one entry each
  const q = withExecGate({ ...p, program: '/bin/bash', args: ['-c', 'x'] }, { paths, runId: 'r-1', parentPid: 42 });
  assert.equal(q.env.LD_PRELOAD, p.env.LD_PRELOAD);
  assert.equal(q.env.PATH, p.env.PATH);
  assert.equal(withPreload(undefined, '/l.so'), '/l.so');
  assert.equal(withShimPath(`/a:${SHIM_BIN}:/b`, SHIM_BIN), `${SHIM_BIN}:/a:/b`);
});

test('withExecGate through bubblewrap: the wrapper is marked, the program after -- is let through once', () => {
  const p = withExecGate(
    { program: '/usr/bin/bwrap', args: ['--ro-bind', '/', '/', '--', '/bin/bash', '-c', 'x'], env: {} },
    { paths, runId: 'r', parentPid: 0 },
  );
  assert.equal(p.env.GATE_CHECKED, '0:/usr/bin/bwrap');
  assert.equal(p.env.GATE_THEN, '/bin/bash');
  // the shims stay readable inside, whatever the profile reads
  assert.deepEqual(p.args, ['/usr/bin/bwrap', '--ro-bind', '/', '/', '--ro-bind', SHIMS_DIR, SHIMS_DIR, '--', '/bin/bash', '-c', 'x']);
});

test("escalationEnv: code-loading variables are what the decision saw, or dropped; the gate's own are removed", () => {
  const sent = [
    'HOME=/root',
    `LD_PRELOAD=${LIBGATE}:/tmp/evil.so`,
    'PYTHONPATH=/tmp/p',
    'PATH=/tmp/bin:/usr/bin',
    'GATE_RUN=r',
    'TERM=xterm',
    'BASH_ENV=/w/rc',
  ];
  const { env, corrected } = escalationEnv({ sent, decided: { PATH: '/usr/bin', BASH_ENV: '/w/rc' }, lib: LIBGATE, fallbackPath: '/bin' });
  assert.deepEqual(env, { HOME: '/root', PATH: '/usr/bin', TERM: 'xterm', BASH_ENV: '/w/rc' });
  assert.deepEqual(corrected.sort(), ['LD_PRELOAD', 'PATH', 'PYTHONPATH']);
  const same = escalationEnv({
    sent: ['PATH=/opt/x:/usr/bin', `LD_PRELOAD=${LIBGATE}`],
    decided: { PATH: '/opt/x:/usr/bin' },
    lib: LIBGATE,
    fallbackPath: '/bin',
  });
  assert.deepEqual(same, { env: { PATH: '/opt/x:/usr/bin' }, corrected: [] });
  const none = escalationEnv({ sent: ['PATH=/opt/x:/usr/bin'], lib: LIBGATE, fallbackPath: '/usr/bin:/bin' });
  assert.equal(none.env.PATH, '/usr/bin:/bin');
});

test('decodeWire: base64 fields decoded (each invalid byte one private-use character; such commands are lossy)', () => {
  const b = (x: Buffer | string) => Buffer.from(x).toString('base64');
  const m = decodeWire({
    v: 1,
    id: 'i',
    type: 'exec',
    encoding: 'base64',
    program: b('/usr/bin/rm'),
    argv: [b('rm'), b(Buffer.from([0x74, 0xff]))],
    cwd: b('/w'),
    env: { PATH: b('/bin') },
  });
  assert.equal(m.program, '/usr/bin/rm');
  assert.deepEqual(m.argv, ['rm', 't\uF7FF']);
  assert.deepEqual(m.env, { PATH: '/bin' });
  assert.equal(m.encoding, undefined);
  assert.equal(isLossy(m.argv as string[]), true);
  assert.equal(isLossy(['rm', 'x']), false);
  const plain = { v: 1, id: 'i', type: 'exec', program: '/bin/ls' };
  assert.deepEqual(decodeWire({ ...plain }), plain);
});
