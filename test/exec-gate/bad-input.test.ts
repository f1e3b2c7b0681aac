/**
 * Bad input and failure: the daemon gone mid-run, a malformed or missing reply, 10,000 execs, an argv of
 * 100,000 arguments, non-UTF-8 bytes. Everything fails closed (exit 126 for the exec, a `gate-sh:` message
 * saying why) and nothing hangs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { gatePaths } from '../../src/paths/paths.js';
import { withExecGate } from '../../src/exec/exec-gate.js';
import { gateSh, run, execGateOptions, SANITIZER_BUILD } from './helpers.js';
import { type DaemonProc, killAll, startDaemon, waitFor } from '../helpers/daemon.js';
import { counted, loadCount } from '../helpers/load.js';

/** execs of one run (npm run test:load: 10,000) */
const MANY = loadCount(10_000, 1_000);

const RULES = ['prefix_rule(pattern=["rm"], decision="forbidden")', 'prefix_rule(pattern=["bash"], decision="allow")'];

let files = 0;
function inFile(rig: DaemonProc, script: string, timeoutMs?: number) {
  const f = `bad${++files}.sh`;
  writeFileSync(join(rig.ws, f), script + '\n');
  return gateSh(rig, `bash ./${f}`, { timeoutMs });
}

test(`${counted(MANY)} execs, an argv of 100,000 arguments (stream fallback) and non-UTF-8 bytes are decided like any other`, async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: RULES }));
  t.after(async () => (killAll(), rig.close()));
  const many = await inFile(rig, `seq ${MANY} | xargs -n 1 -P 8 /bin/echo | wc -l`, 600_000);
  assert.equal(many.stdout.trim(), String(MANY), many.stderr);
  // two execs of 100,000 arguments each, read and decided whole: about 30 s under the ASan test build
  const big = await inFile(rig, '/bin/echo $(seq 100000) | wc -w; touch big-target; rm big-target $(seq 100000); echo rm=$?', SANITIZER_BUILD ? 180_000 : undefined);
  assert.match(big.stdout, /^100000\nrm=126$/m, big.stderr);
  assert.match(big.stderr, /gate-sh: denied: rm big-target 1 2 3/);
  assert.ok(existsSync(join(rig.ws, 'big-target')), 'rm with 100,000 arguments ran');
  const raw = await inFile(rig, `/bin/printf '%s' $'a\\xff\\xfeb' | od -An -tx1; touch $'t\\xff'; rm $'t\\xff'; echo rm=$?`);
  assert.match(raw.stdout, /61 ff fe 62/, raw.stderr);
  assert.match(raw.stdout, /rm=126/, raw.stderr);
  assert.ok(readdirSync(rig.ws, { encoding: 'buffer' }).some((n) => n.equals(Buffer.from([0x74, 0xff]))), 'a non-UTF-8 rm ran');
  // reply sockets are cleaned up: the supervisor's own, kept for its asks, goes when it ends, which may be
  // a moment after gate-sh has returned (it waits for the last process of the run)
  const left = () => readdirSync(rig.paths.clientDir).filter((f) => f.startsWith('g'));
  await waitFor(() => left().length === 0 || undefined, 'the reply sockets to be removed', 5000).catch(() => {});
  assert.deepEqual(left(), []);
});

test('the daemon gone mid-run: the next exec fails closed at once with a message', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: RULES }));
  t.after(async () => (killAll(), rig.close()));
  const started = join(rig.ws, 'started');
  const go = join(rig.ws, 'go');
  const pending = inFile(rig, `echo x > ${started}; while [ ! -e ${go} ]; do :; done; /bin/echo after; echo rc=$?`);
  await waitFor(() => existsSync(started) || undefined, 'the script to start');
  await rig.kill();
  const t0 = Date.now();
  writeFileSync(go, '');
  const r = await pending;
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  assert.doesNotMatch(r.stdout, /^after$/m);
  assert.match(r.stdout, /rc=126/);
  assert.match(r.stderr, /gate-sh: exec gate: \/bin\/echo after: the gate-sh daemon is not reachable .*gate daemon start/);
});

/** A broken peer on a real socket: answers every exec request the way `mode` says. */
async function brokenDaemon(mode: 'garbage' | 'no-action' | 'wrong-type' | 'silent') {
  const te = tempEnv();
  const paths = gatePaths(te.env);
  mkdirSync(paths.clientDir, { recursive: true, mode: 0o700 });
  const dgram = createRequire(import.meta.url)('unix-dgram');
  const sock = dgram.createSocket('unix_dgram', (buf: Buffer, rinfo: { path?: string }) => {
    const id = JSON.parse(buf.toString()).id;
    const out =
      mode === 'garbage'
        ? '{"v":1,"id":'
        : mode === 'no-action'
          ? JSON.stringify({ v: 1, id, type: 'exec' })
          : mode === 'wrong-type'
            ? JSON.stringify({ v: 1, id, type: 'ack' })
            : null;
    if (out && rinfo.path) sock.send(Buffer.from(out), 0, out.length, rinfo.path);
  });
  sock.on('error', () => {});
  sock.bind(paths.requestSock);
  const gated = withExecGate(
    { program: '/bin/bash', args: ['-c', '/bin/echo ran; echo rc=$?'], env: { ...te.env, GATE_EXEC_TIMEOUT_MS: '100' } },
    { paths, runId: 'r-broken', parentPid: process.pid },
  );
  const r = await run(gated.program, gated.args, { env: gated.env, cwd: te.dir, timeoutMs: 10_000 });
  sock.close();
  te.cleanup();
  return r;
}

test('a malformed, wrong or missing reply fails the exec closed with the reason', async () => {
  const cases = {
    garbage: /malformed reply/,
    'no-action': /malformed reply from the daemon \(no action\)/,
    'wrong-type': /unexpected reply type ack/,
    silent: /did not answer/,
  } as const;
  for (const [mode, why] of Object.entries(cases)) {
    const r = await brokenDaemon(mode as keyof typeof cases);
    assert.doesNotMatch(r.stdout, /^ran$/m, mode);
    assert.match(r.stdout, /rc=126/, `${mode}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`gate-sh: exec gate: /bin/echo ran: .*${why.source}`), `${mode}: ${r.stderr}`);
  }
});
