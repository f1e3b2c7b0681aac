/**
 * `gate config set|get` of a dotted key, the way config.toml nests it (`sandbox_workspace_write.network_access`,
 * `secrets.hide`): set prints the value it set (it printed `undefined` when dotted keys reached the daemon),
 * get prints the same, the change reaches the next run (a writable root set at run time is writable; before,
 * the write is refused), a table that is not in force is refused with why, and a key nobody knows is misuse
 * (exit 2). Real daemon, real gate-sh, real bubblewrap.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GATE } from '../helpers/env.js';
import { daemonForTest, killAll } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';
import { setConfigValue, DEFAULT_CONFIG, ConfigError } from '../../src/config/config.js';
import { viewValue } from '../../src/config/config-key.js';

after(killAll);

function gate(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [GATE, ...args], { env, encoding: 'utf8' });
}

test('setConfigValue: dotted keys of [sandbox_workspace_write] and [secrets]; the table must be in force', () => {
  const c = setConfigValue(DEFAULT_CONFIG, 'sandbox_workspace_write.network_access', 'true', 'gate config set');
  assert.equal(c.sandbox_policy.type === 'workspace-write' && c.sandbox_policy.network_access, true);
  const r = setConfigValue(c, 'sandbox_workspace_write.network_access', 'rules', 'x');
  assert.equal(r.sandbox_policy.type === 'workspace-write' && r.sandbox_policy.network_access, 'rules');
  const roots = setConfigValue(DEFAULT_CONFIG, 'sandbox_workspace_write.writable_roots', '["/a","/b"]', 'x');
  assert.deepEqual(roots.sandbox_policy.type === 'workspace-write' && roots.sandbox_policy.writable_roots, ['/a', '/b']);
  const colon = setConfigValue(DEFAULT_CONFIG, 'sandbox_workspace_write.writable_roots', '/a:/b', 'x');
  assert.deepEqual(colon.sandbox_policy, roots.sandbox_policy);
  assert.throws(() => setConfigValue(DEFAULT_CONFIG, 'sandbox_workspace_write.network_access', 'maybe', 'x'), /must be true or false or rules, not 'maybe'/);
  const ro = setConfigValue(DEFAULT_CONFIG, 'sandbox_mode', 'read-only', 'x');
  assert.throws(() => setConfigValue(ro, 'sandbox_workspace_write.exclude_slash_tmp', 'true', 'x'), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^x: 'sandbox_workspace_write\.exclude_slash_tmp': applies only to sandbox_mode workspace-write, and sandbox_mode is read-only/);
    return true;
  });
  assert.throws(() => setConfigValue(DEFAULT_CONFIG, 'sandbox_workspace_write.bogus', 'true', 'x'), /unknown or read-only key/);
  assert.deepEqual(viewValue({ a: { b: 1 } }, 'a.b'), { found: true, value: 1 });
  assert.deepEqual(viewValue({ a: { b: 1 } }, 'a.c'), { found: false });
  assert.deepEqual(viewValue({ a: [1] }, 'a.0'), { found: false });
});

test('gate config set|get of a dotted key prints the value set, and the next run gets it', { timeout: 120_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });
  const outside = join(d.te.dir, 'cache');
  mkdirSync(outside);
  // every temp folder is under /tmp, writable by default: /tmp off first (a dotted key too)
  for (const key of ['sandbox_workspace_write.exclude_slash_tmp', 'sandbox_workspace_write.exclude_tmpdir_env_var']) {
    const s = gate(['config', 'set', key, 'true'], d.env);
    assert.equal(s.status, 0, s.stderr);
    assert.equal(s.stdout, 'true\n');
  }
  // before: the folder is not writable in the turn sandbox
  const before = await gateSh(['-c', `touch ${outside}/x 2>/dev/null || echo refused`], { env: d.env, cwd: d.ws });
  assert.equal(before.stdout.toString(), 'refused\n', before.stderr.toString());

  const set = gate(['config', 'set', 'sandbox_workspace_write.writable_roots', outside], d.env);
  assert.equal(set.status, 0, set.stderr);
  assert.equal(set.stdout, `${JSON.stringify([outside])}\n`);
  assert.match(set.stderr, /in force until the daemon stops; to keep it, set writable_roots in \[sandbox_workspace_write\] in .*config\.toml/);
  const get = gate(['config', 'get', 'sandbox_workspace_write.writable_roots'], d.env);
  assert.equal(get.status, 0, get.stderr);
  assert.equal(get.stdout, set.stdout);
  const after = await gateSh(['-c', `touch ${outside}/x && echo wrote`], { env: d.env, cwd: d.ws });
  assert.equal(after.stdout.toString(), 'wrote\n', after.stderr.toString());
  assert.ok(existsSync(join(outside, 'x')));

  for (const [key, value, shown] of [
    ['sandbox_workspace_write.network_access', 'false', 'false'],
    ['sandbox_workspace_write.network_access', 'rules', 'rules'],
    ['secrets.hide', '~/.config/op', '["~/.config/op"]'],
    ['secrets.show', '', '[]'],
  ]) {
    const s = gate(['config', 'set', key, value], d.env);
    assert.equal(s.status, 0, `${key}: ${s.stderr}`);
    assert.equal(s.stdout, `${shown}\n`, key);
    assert.doesNotMatch(s.stdout, /undefined/);
    if (shown !== '[]') assert.equal(gate(['config', 'get', key], d.env).stdout, `${shown}\n`, key);
  }
  // a key config.toml has but this configuration leaves out: not set (exit 1), never `undefined`
  const unset = gate(['config', 'get', 'secrets.show'], d.env);
  assert.equal(unset.status, 1, unset.stdout);
  assert.match(unset.stderr, /^gate: config get: 'secrets\.show' is not set/);
  // a table not in force is refused, with why; a key nobody knows is misuse
  assert.equal(gate(['config', 'set', 'sandbox_mode', 'read-only'], d.env).status, 0);
  const ro = gate(['config', 'set', 'sandbox_workspace_write.network_access', 'true'], d.env);
  assert.notEqual(ro.status, 0);
  assert.match(ro.stderr, /applies only to sandbox_mode workspace-write, and sandbox_mode is read-only/);
  const roGet = gate(['config', 'get', 'sandbox_workspace_write.network_access'], d.env);
  assert.equal(roGet.status, 1);
  assert.match(roGet.stderr, /is not set \(sandbox_mode read-only\)/);
  const bogus = gate(['config', 'get', 'sandbox_workspace_write.bogus'], d.env);
  assert.equal(bogus.status, 2);
  assert.match(gate(['config', 'set', 'sandbox_workspace_write.bogus', '1'], d.env).stderr, /Invalid values/);
});
