/** `gate explain` lists the network of a script's run: the setting, the network rules (file:line), the config lists. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv, GATE } from '../helpers/env.js';

test('gate explain: network setting, rules and lists, in text and JSON', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  const rules = join(te.env.GATE_HOME, 'rules', 'default.rules');
  writeFileSync(rules, 'prefix_rule(pattern=["npm", "test"])\nnetwork_rule(host="registry.test", protocol="https", decision="allow")\n');
  writeFileSync(join(te.env.GATE_HOME, 'config.toml'), '[network]\nallowed_domains = ["**.pypi.test"]\ndenied_domains = ["*.evil.test"]\n');
  const r = spawnSync(process.execPath, [GATE, 'explain', 'npm install'], { env: te.env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^network: off$/m);
  assert.match(r.stdout, new RegExp(`${rules.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2  network_rule\\(host="registry\\.test", protocol="https", decision="allow"\\)`));
  assert.match(r.stdout, /allowed_domains: \*\*\.pypi\.test/);
  assert.match(r.stdout, /denied_domains: \*\.evil\.test/);
  const j = JSON.parse(spawnSync(process.execPath, [GATE, 'explain', '--json', 'npm install'], { env: te.env, encoding: 'utf8' }).stdout);
  assert.deepEqual(j.network, {
    setting: 'off',
    rules: [{ host: 'registry.test', protocol: 'https', decision: 'allow', source: `${rules}:2` }],
    allowed_domains: ['**.pypi.test'],
    denied_domains: ['*.evil.test'],
  });
  // danger-full-access: every connection goes through, said so
  const full = spawnSync(process.execPath, [GATE, 'explain', '--sandbox', 'danger-full-access', 'npm install'], { env: te.env, encoding: 'utf8' });
  assert.match(full.stdout, /^network: on\n {2}\(every connection is let through/m);
});
