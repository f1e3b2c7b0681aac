/**
 * Issue 32, finding 9 (the smaller items): an audit record has a bounded size and the log rotates; the
 * `npm pack` tarball is ignored by git; `gate config get` prints one format (TOML, or JSON with --json);
 * `gate config set` says the change lasts until the daemon stops; a --with-permissions path that does not
 * exist is refused before anyone is asked (an existing one is asked, and runs once approved); `gate status`
 * says which installation and version the daemon runs. Real daemon, real gate-sh, real git.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { GATE, ROOT, tempEnv } from '../helpers/env.js';
import { daemonForTest, killAll } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';
import { AuditLog, MAX_RECORD } from '../../src/daemon/audit.js';

after(killAll);

function gate(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [GATE, ...args], { env, encoding: 'utf8' });
}

test('an audit record is cut to a bounded size; the log rotates past its size', () => {
  const te = tempEnv();
  try {
    const path = join(te.dir, 'audit.jsonl');
    const log = new AuditLog(path, 's', 200_000);
    log.write({ kind: 'run', argv: ['bash', '-c', `echo ${'x'.repeat(3_000_000)}`], detail: 'big' });
    log.write({ kind: 'run', detail: 'small' });
    log.flush();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    assert.equal(lines.length, 2);
    assert.ok(lines[0].length < MAX_RECORD + 200, `a cut record: ${lines[0].length} characters`);
    const big = JSON.parse(lines[0]);
    assert.equal(big.cut, true);
    assert.equal(big.detail, 'big');
    assert.match(big.argv[2], /… \(3000005 characters\)$/);
    assert.equal(JSON.parse(lines[1]).detail, 'small');
    for (let i = 0; i < 100; i++) log.write({ kind: 'run', detail: 'y'.repeat(3000) });
    log.flush();
    assert.ok(existsSync(`${path}.1`), 'rotated');
    assert.ok(statSync(path).size < 200_000, 'the new log is small');
    log.close();
  } finally {
    te.cleanup();
  }
});

test('a gated 2 MB script leaves no record over the cap in the real audit log', { timeout: 120_000 }, async (t) => {
  // over the size the parsers read, the script is asked (issue 30): an approver says yes
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_NO_AUTOSTART: '1' }, autoApprove: true });
  const r = await gateSh([], { env: d.env, cwd: d.ws, input: `echo ${'x'.repeat(2_000_000)} | wc -c\n` });
  assert.equal(r.stdout.toString(), '2000001\n', r.stderr.toString());
  const audit = readFileSync(join(d.env.GATE_HOME, 'audit.jsonl'), 'utf8').split('\n');
  const longest = Math.max(...audit.map((l) => l.length));
  assert.ok(longest < MAX_RECORD + 500, `longest record ${longest} characters`);
});

test('the npm pack tarball is ignored by git', () => {
  const r = spawnSync('git', ['check-ignore', '-q', 'gate-sh-0.1.0.tgz'], { cwd: ROOT });
  assert.equal(r.status, 0);
});

test('gate config get: TOML or JSON, never mixed; config set says how long; gate status names the install; --with-permissions paths checked first', { timeout: 120_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' }, workspace: 'ws', autoApprove: true });
  const toml = gate(['config', 'get'], d.env);
  assert.equal(toml.status, 0, toml.stderr);
  const json = gate(['config', 'get', '--json'], d.env);
  assert.deepEqual(JSON.parse(JSON.stringify(parse(toml.stdout))), JSON.parse(json.stdout), 'the TOML view is the JSON view');
  const set = gate(['config', 'set', 'approval_timeout_ms', '60000'], d.env);
  assert.equal(set.status, 0, set.stderr);
  assert.match(set.stderr, /in force until the daemon stops; to keep it, set approval_timeout_ms in .*config\.toml/);
  const st = gate(['status'], d.env);
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  assert.match(st.stdout, new RegExp(`^install: +gate-sh ${version.replace(/\./g, '\\.')} at ${ROOT}$`, 'm'));
  // a path that does not exist: refused before anyone is asked (both entries)
  for (const env of [d.env, { ...d.env, GATE_SH_NODE: '1' }]) {
    const bad = await gateSh(['--with-permissions', '{"file_system":{"write":["./nope"]}}', '-c', 'echo asked'], { env, cwd: d.ws });
    assert.equal(bad.code, 2, bad.stderr.toString());
    assert.match(bad.stderr.toString(), /--with-permissions: '.*\/ws\/nope' does not exist \(create it first\)/);
  }
  assert.equal(d.prompts.length, 0, 'nobody was asked');
  // an existing one is asked, and runs once approved
  mkdirSync(join(d.ws, 'out'));
  const good = await gateSh(['--with-permissions', '{"file_system":{"write":["./out"]}}', '-c', 'touch out/made && echo made'], { env: d.env, cwd: d.ws });
  assert.equal(good.code, 0, good.stderr.toString());
  assert.equal(good.stdout.toString(), 'made\n');
  assert.ok(d.prompts.length >= 1, 'the existing path was asked about');
});
