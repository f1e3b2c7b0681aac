import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configFromEnv, configFromTable, configView, ConfigError, DEFAULT_CONFIG, setConfigValue } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load.js';
import { tempEnv } from '../../helpers/env.js';
import { parseSince, matches, formatRecord } from '../../../src/client/audit-query.js';
import { acquireLock, lockHeld, readOwner } from '../../../src/client/lock.js';

test('defaults with no config: on-request, workspace-write, autostart, 120 s', () => {
  const te = tempEnv();
  try {
    const c = loadConfig({ file: join(te.dir, 'none.toml'), env: {} });
    assert.deepEqual(c, DEFAULT_CONFIG);
    assert.equal(c.approval_policy, 'on-request');
    assert.equal(c.sandbox_policy.type, 'workspace-write');
    assert.equal(c.approval_timeout_ms, 120_000);
  } finally {
    te.cleanup();
  }
});

test('Codex key names, the reject table, and gate-sh keys', () => {
  const c = configFromTable(
    {
      approval_policy: { reject: { sandbox_approval: true, rules: false, mcp_elicitations: true } },
      sandbox_mode: 'read-only',
      autostart: false,
      rules: ['/x.rules'],
      git_read_only: true,
    },
    'f.toml',
  );
  assert.deepEqual(c.approval_policy, { reject: { sandbox_approval: true, rules: false, mcp_elicitations: true } });
  assert.deepEqual(c.sandbox_policy, { type: 'read-only' });
  assert.equal(c.autostart, false);
  assert.deepEqual(c.rules, ['/x.rules']);
  // [sandbox_workspace_write] alone applies to the default workspace-write mode
  const ww = configFromTable({ sandbox_workspace_write: { exclude_slash_tmp: true } }, 'f.toml');
  assert.deepEqual(ww.sandbox_policy, {
    type: 'workspace-write',
    writable_roots: [],
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: true,
  });
  assert.equal(configView(ww).sandbox_mode, 'workspace-write');
});

test('bad values name the file (line:col for TOML syntax) and the key', () => {
  const te = tempEnv();
  try {
    const bad: [string, RegExp][] = [
      ['approval_policy = "sometimes"\n', /f\.toml: 'approval_policy': invalid approval policy "sometimes"/],
      ['sandbox_mode = "open"\n', /f\.toml: 'sandbox_mode': invalid sandbox policy 'open'/],
      ['approval_timeout_ms = -1\n', /f\.toml: 'approval_timeout_ms' must be a whole number/],
      ['autostart = "yes"\n', /f\.toml: 'autostart' must be true or false/],
      ['colour = "blue"\n', /f\.toml: unknown key 'colour'/],
      ['[sandbox_workspace_write]\nwritable = ["/x"]\n', /unknown key 'sandbox_workspace_write\.writable'/],
      ['approval_policy = \n', /f\.toml:1:\d+: /],
    ];
    for (const [text, re] of bad) {
      const file = join(te.dir, 'f.toml');
      writeFileSync(file, text);
      assert.throws(() => loadConfig({ file, env: {} }), (e: Error) => e instanceof ConfigError && re.test(e.message), text);
    }
  } finally {
    te.cleanup();
  }
});

test('environment over file, flags over environment; run-time set validates', () => {
  const env = configFromEnv(
    {
      GATE_APPROVAL_POLICY: 'never',
      GATE_SANDBOX_MODE: 'danger-full-access',
      GATE_APPROVAL_TIMEOUT_MS: '50',
      GATE_RULES: '/a.rules:/b.rules',
      GATE_AUTOSTART: '0',
    },
    DEFAULT_CONFIG,
  );
  assert.equal(env.approval_policy, 'never');
  assert.deepEqual(env.sandbox_policy, { type: 'danger-full-access' });
  assert.equal(env.approval_timeout_ms, 50);
  assert.deepEqual(env.rules, ['/a.rules', '/b.rules']);
  assert.equal(env.autostart, false);
  assert.throws(() => configFromEnv({ GATE_APPROVAL_POLICY: 'often' }, DEFAULT_CONFIG), /environment variable GATE_APPROVAL_POLICY: 'approval_policy'/);
  const set = setConfigValue(DEFAULT_CONFIG, 'approval_policy', '{"reject":{"rules":true}}', 'x');
  assert.deepEqual(set.approval_policy, { reject: { sandbox_approval: false, rules: true, mcp_elicitations: false } });
  assert.throws(() => setConfigValue(DEFAULT_CONFIG, 'session', 'x', 'config set'), /unknown or read-only key 'session'/);
});

test('audit filters and rows; the session lock: exclusive, a dead owner is stale', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  assert.equal(parseSince('10m', now), now - 600_000);
  assert.equal(parseSince('2026-01-01T00:00:00Z'), Date.parse('2026-01-01T00:00:00Z'));
  assert.throws(() => parseSince('yesterday'), /invalid --since 'yesterday'/);
  const rec = {
    time: '2026-01-01T11:55:00.123Z',
    session: 's',
    kind: 'decision' as const,
    run_id: 'r-1',
    argv: ['rm', '-rf', 'a b'],
    decision: 'forbidden',
    action: 'Deny(x)',
    source: '/r.rules:3',
  };
  assert.ok(matches(rec, { run: 'r-1', decision: 'forbidden', since: now - 600_000 }));
  assert.ok(matches(rec, { decision: 'deny' }));
  assert.ok(!matches(rec, { run: 'r-2' }));
  assert.match(formatRecord(rec), /^2026-01-01 11:55:00Z  decision  r-1 +forbidden +Deny\(x\) +\/r\.rules:3  rm -rf 'a b'$/);

  const te = tempEnv();
  try {
    const path = join(te.dir, 'lock');
    const a = acquireLock(path);
    assert.ok(a.ok);
    assert.equal(lockHeld(path), true);
    assert.deepEqual(readOwner(path), { pid: process.pid, pidNamespace: readlinkSync('/proc/self/ns/pid') });
    // The kernel holds it per open file, so even this same process cannot take it twice. A live daemon's
    // lock across PID namespaces: lifecycle.test.ts.
    const b = acquireLock(path);
    assert.deepEqual(b, { ok: false, owner: { pid: process.pid, pidNamespace: readlinkSync('/proc/self/ns/pid') } });
    if (a.ok) a.lock.release();
    assert.equal(lockHeld(path), false);
    assert.equal(readOwner(path), undefined, 'no owner written down once released');
    writeFileSync(path, '2147483646\n'); // what a crashed daemon leaves: a pid, no lock
    const c = acquireLock(path);
    assert.ok(c.ok, 'a file without a holder is no lock');
    if (c.ok) c.lock.release();
    assert.equal(lockHeld(join(te.dir, 'none')), undefined);
  } finally {
    te.cleanup();
  }
});
