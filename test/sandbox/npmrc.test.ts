/**
 * `~/.npmrc` in the sandbox: hidden while it holds a credential (a token, a password, a URL with
 * `user:password@`, a client key, anything not known to be a setting), shown whole while it holds only
 * settings, so npm inside keeps its registry and prefix (docs/secrets.md, "Settings files"). The reading
 * (src/sandbox/npmrc.ts) pure; then end to end: a real daemon, the real gate-sh, bubblewrap and npm in a
 * scratch HOME (tempEnv's), where `npm config get registry` inside reads the user's registry, or npm's
 * default once a token line makes the file hidden (and `cat` finds it empty). The registry named is on
 * loopback and never contacted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { GATE } from '../helpers/env.js';
import { daemonForTest } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';
import { npmrcHoldsCredential } from '../../src/sandbox/npmrc.js';
import { secretLocations } from '../../src/sandbox/secrets.js';
import { fakeFs } from '../../src/sandbox/fs-view.js';

test('npmrcHoldsCredential: settings only is no secret; a token, a password, userinfo or an unknown key is', () => {
  const settings = [
    '; comment\n# comment\n',
    'registry=https://npm.example.com/\nprefix=~/.npm-global\n@acme:registry = https://npm.acme.test/\n',
    'save-exact=true\nfund=false\naudit=false\ncache=/srv/npm-cache\n',
    '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n', // names a variable: the token is in the environment
    '_authToken="${NPM_TOKEN}"\r\nregistry=https://r.test/\r\n',
  ];
  for (const t of settings) assert.equal(npmrcHoldsCredential(t), false, t);
  const secret = [
    '//registry.npmjs.org/:_authToken=npm_abc123\n',
    'registry=https://r.test/\n//r.test/:_password=cGFzcw==\n',
    '_auth=dXNlcjpwYXNz\n',
    'registry=https://user:pass@r.test/\n',
    'https-proxy=http://me:secret@proxy.test:3128/\n',
    'key="-----BEGIN PRIVATE KEY-----\\nabc"\n',
    'email=me@example.com\n', // not a known setting: fail closed
    '[section]\nregistry=https://r.test/\n',
    'just-a-word\n',
  ];
  for (const t of secret) assert.equal(npmrcHoldsCredential(t), true, t);
});

test('secretLocations: a settings-only ~/.npmrc (or $NPM_CONFIG_USERCONFIG) is left visible; hide wins; no fs, no read', () => {
  const env = { NPM_CONFIG_USERCONFIG: '/cfg/npmrc' };
  const fs = (text: string, moved = text) => fakeFs({ '/h/.npmrc': { text }, '/cfg/npmrc': { text: moved } });
  const has = (fsv: ReturnType<typeof fakeFs> | undefined, o: { hide?: string[]; show?: string[] } = {}) =>
    secretLocations({ homes: ['/h'], env, setting: o.hide || o.show ? o : undefined, fs: fsv });
  const plain = 'registry=https://r.test/\n';
  const token = '//r.test/:_authToken=abc\n';
  assert.ok(!has(fs(plain)).includes('/h/.npmrc'));
  assert.ok(!has(fs(plain)).includes('/cfg/npmrc'));
  assert.ok(has(fs(token)).includes('/h/.npmrc'));
  assert.ok(has(fs(plain, token)).includes('/cfg/npmrc') && !has(fs(plain, token)).includes('/h/.npmrc'));
  assert.ok(has(undefined).includes('/h/.npmrc'), 'without a way to read it, hidden');
  assert.ok(has(fs(plain), { hide: ['~/.npmrc'] }).includes('/h/.npmrc'), 'hide in config.toml always hides');
  assert.ok(has(fs(`${plain}# ${'x'.repeat(5000)}\n`)).includes('/h/.npmrc'), 'a file not read whole is hidden');
  assert.ok(has(fakeFs({ '/h/.npmrc': 'file' })).includes('/h/.npmrc'), 'unreadable: hidden');
  assert.ok(has(fakeFs({ '/h/.npmrc': '->/data/npmrc', '/data/npmrc': { text: plain } })).includes('/h/.npmrc') === false, 'a symlink is read at its target');
  // the other defaults are hidden whatever they hold
  assert.ok(has(fakeFs({ '/h/.netrc': { text: plain } })).includes('/h/.netrc'));
});

test('npm inside the sandbox keeps a settings-only ~/.npmrc; a token line hides the whole file', { timeout: 120_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });
  const npmrc = join(d.env.HOME, '.npmrc');
  const registry = 'http://127.0.0.1:4873/';
  writeFileSync(npmrc, `registry=${registry}\nfund=false\n`);
  const inside = async () => {
    const r = await gateSh(['-c', 'npm config get registry; echo "[$(cat ~/.npmrc)]"'], { env: d.env, cwd: d.ws });
    assert.equal(r.code, 0, r.stderr.toString());
    return r.stdout.toString();
  };
  assert.equal(await inside(), `${registry}\n[registry=${registry}\nfund=false]\n`);
  const explain = () => spawnSync(process.execPath, [GATE, 'explain', 'true'], { env: d.env, encoding: 'utf8' }).stdout;
  assert.doesNotMatch(explain(), new RegExp(`^hidden secrets .*${npmrc.replace(/[.]/g, '\\.')}`, 'm'));

  writeFileSync(npmrc, `registry=${registry}\n//127.0.0.1:4873/:_authToken=npm_TOKEN_of_the_test\n`);
  const hidden = await inside();
  assert.equal(hidden, 'https://registry.npmjs.org/\n[]\n');
  assert.doesNotMatch(hidden, /TOKEN_of_the_test/);
  assert.match(explain(), new RegExp(`^hidden secrets .*${npmrc.replace(/[.]/g, '\\.')}`, 'm'));
});
