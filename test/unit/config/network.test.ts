/**
 * `[network] allowed_domains / denied_domains` in config.toml: read into the session configuration, shown by
 * `gate config get`, and a bad entry (a bare `*`) refused with the file's line:col.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import { configView } from '../../../src/config/config.js';

function withConfig(text: string, f: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'g-'));
  try {
    const file = join(dir, 'config.toml');
    writeFileSync(file, text);
    f(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the lists are read, canonical, and shown as written', () => {
  withConfig('[network]\nallowed_domains = ["Registry.Test", "**.pypi.test"]\ndenied_domains = ["*.evil.test"]\n', (file) => {
    const c = loadConfig({ file, env: {} });
    assert.deepEqual(
      c.network_domains.allowed.map((p) => [p.kind, p.domain]),
      [
        ['exact', 'registry.test'],
        ['apex-and-subdomains', 'pypi.test'],
      ],
    );
    assert.deepEqual(c.network_domains.denied.map((p) => p.text), ['*.evil.test']);
    assert.deepEqual(configView(c).network, { allowed_domains: ['Registry.Test', '**.pypi.test'], denied_domains: ['*.evil.test'] });
  });
  withConfig('approval_policy = "on-request"\n', (file) => assert.equal(configView(loadConfig({ file, env: {} })).network, undefined));
});

test('a bare * is refused with file:line:col; other mistakes name the key', () => {
  withConfig('approval_policy = "on-request"\n\n[network]\nallowed_domains = ["ok.test",\n  "*"]\n', (file) => {
    assert.throws(() => loadConfig({ file, env: {} }), (e: Error) => {
      assert.equal(e.message, `${file}:5:3: 'network.allowed_domains': '*' would match every host; list the domains instead (e.g. "**.example.com")`);
      return true;
    });
  });
  withConfig("[network]\ndenied_domains = ['a.*.test']\n", (file) => {
    assert.throws(() => loadConfig({ file, env: {} }), new RegExp(`^Error: ${file}:2:19: 'network.denied_domains': 'a\\.\\*\\.test': a wildcard may only lead`));
  });
  withConfig('[network]\nallowed = ["x.test"]\n', (file) => assert.throws(() => loadConfig({ file, env: {} }), /unknown key 'network\.allowed'/));
  withConfig('[network]\nallowed_domains = "x.test"\n', (file) => assert.throws(() => loadConfig({ file, env: {} }), /must be a list of domains/));
});
