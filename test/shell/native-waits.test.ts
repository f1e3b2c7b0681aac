/**
 * The native gate-sh (shims/gate-sh-native.c) waiting for a daemon that answers badly, through the C side's one
 * request loop (shims/gate-transport.c, gate_ask with GATE_CALL_WAITS): a daemon that says a person is asked and
 * then falls silent is noticed by the heartbeat (its pings unanswered for REQUEST_WAITS.silenceMs), and an error
 * reply is said in the call's words (CALL_TEXTS). A peer on a real socket at the daemon's path plays the daemon;
 * nothing runs in any case (exit 126).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, tempEnv } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { gatePaths } from '../../src/paths/paths.js';
import { CALL_TEXTS, fill } from '../../src/protocol/shared-with-c.js';

const NATIVE = join(ROOT, 'bin', 'gate-sh');

type Answer = (req: { id: string; type: string }) => object | null;

/** The native gate-sh's `-c 'echo ran'` against a peer that answers each request as `answer` says (null: nothing). */
async function against(answer: Answer) {
  const te = tempEnv();
  const paths = gatePaths(te.env);
  mkdirSync(paths.clientDir, { recursive: true, mode: 0o700 });
  const dgram = createRequire(import.meta.url)('unix-dgram');
  const seen: string[] = [];
  const sock = dgram.createSocket('unix_dgram', (buf: Buffer, rinfo: { path?: string }) => {
    const req = JSON.parse(buf.toString());
    seen.push(req.type);
    const out = answer(req);
    if (out && rinfo.path) {
      const b = Buffer.from(JSON.stringify({ v: 1, id: req.id, ...out }));
      sock.send(b, 0, b.length, rinfo.path);
    }
  });
  sock.on('error', () => {});
  try {
    sock.bind(paths.requestSock);
    const r = await run(NATIVE, ['-c', 'echo ran'], { env: { ...te.env, GATE_SH_NODE: '' }, cwd: te.dir, timeoutMs: 30_000 });
    return { ...r, seen };
  } finally {
    sock.close();
    te.cleanup();
  }
}

test('a daemon that says a person is asked, then falls silent: the pings go unanswered and gate-sh says so', { timeout: 60_000 }, async () => {
  const r = await against((req) => (req.type === 'ping' ? null : { type: 'pending', approval_ids: ['a1'] }));
  assert.doesNotMatch(r.stdout, /ran/);
  assert.equal(r.code, 126, r.stderr);
  assert.ok(r.seen.includes('ping'), `pings sent: ${r.seen.join(' ')}`);
  assert.match(r.stderr, new RegExp(`gate-sh: ${CALL_TEXTS.waiting.replace(/[.()]/g, '\\$&')}`));
  assert.ok(r.stderr.includes(`gate-sh: ${fill(CALL_TEXTS.nothingRan, CALL_TEXTS.silent)}`), r.stderr);
});

test("an error reply is said in the call's words: refused as the daemon words it, another code with its code", async () => {
  const refused = await against(() => ({ type: 'error', code: 'refused', message: 'not now, says the test' }));
  assert.equal(refused.code, 126, refused.stderr);
  assert.doesNotMatch(refused.stdout, /ran/);
  assert.ok(refused.stderr.includes(`gate-sh: ${fill(CALL_TEXTS.nothingRan, 'not now, says the test')}`), refused.stderr);
  const version = await against(() => ({ type: 'error', code: 'bad-version', message: 'v9 only' }));
  assert.equal(version.code, 126, version.stderr);
  assert.ok(version.stderr.includes(fill(CALL_TEXTS.badVersion, 'v9 only')), version.stderr);
});
