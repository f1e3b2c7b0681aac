// The hidden credential locations on plain data (fakeFs): the list and the setting that changes it, the
// masks in every sandbox kind, grants of a permission profile, the config keys and their errors, the prompt
// line. The end-to-end behaviour (real daemon, bwrap, a scratch HOME) is test/sandbox/secrets.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permissionProfileArgv, turnSandboxArgv, type SandboxContext } from '../../../src/sandbox/bwrap-argv.js';
import { fakeFs } from '../../../src/sandbox/fs-view.js';
import { runContext } from './run-context.js';
import { workspaceWrite } from '../../../src/sandbox/policy.js';
import { SandboxError } from '../../../src/sandbox/errors.js';
import { checkSecretEntry, existingSecrets, secretAccess, secretLocations } from '../../../src/sandbox/secrets.js';
import { configFromEnv, configFromTable, ConfigError, configView, DEFAULT_CONFIG, settingsConflict } from '../../../src/config/config.js';
import { secretAccessText } from '../../../src/text/display.js';
import { renderPrompt } from '../../../src/client/prompt-view.js';
import { elicitationFor } from '../../../src/integrations/elicitation.js';

const base = {
  '/usr': 'dir', '/etc': 'dir', '/tmp': 'dir', '/ws': 'dir', '/rt/gate-sh/default/req': 'dir', '/rt/gate-sh/default/req/c': 'dir',
  '/rt/gate-sh/default/req/c/r-1': 'dir', '/rt/gate-sh/empty': 'file', '/h': 'dir', '/h/.ssh/id_rsa': 'file', '/h/.aws/credentials': 'file', '/h/.netrc': 'file', '/h/notes': 'file',
} as const;

const LOCATIONS = secretLocations({ homes: ['/h'], env: {} });

function ctx(extra: Record<string, string> = {}, over: Partial<SandboxContext> = {}): SandboxContext {
  return runContext({ ...base, ...extra }, { secrets: LOCATIONS, secretFile: '/rt/gate-sh/empty', ...over });
}

/** The masks of an argv: folder → 'dir' (an empty read-only folder), file → its bound source. */
function masks(a: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--tmpfs' && a[i + 1].startsWith('/h')) out[a[i + 1]] = a.includes(a[i + 1], i + 2) ? 'dir' : 'tmpfs';
    if (a[i] === '--ro-bind' && a[i + 2].startsWith('/h') && a[i + 1] !== a[i + 2]) out[a[i + 2]] = a[i + 1];
  }
  return out;
}

const HIDDEN = { '/h/.ssh': 'dir', '/h/.aws': 'dir', '/h/.netrc': '/rt/gate-sh/empty' };

test('the default list: ~ of every home, variables that move a location, never / or a home itself', () => {
  const l = secretLocations({
    homes: ['/h', '/root'],
    env: { XDG_CONFIG_HOME: '/xdg', KUBECONFIG: '/k/a:/k/b:rel/c', CODEX_HOME: '/ch', GNUPGHOME: '/h', DOCKER_CONFIG: 'relative' },
  });
  for (const p of ['/h/.ssh', '/root/.ssh', '/h/.aws', '/h/.config/gh', '/xdg/gh', '/xdg/gcloud', '/k/a', '/k/b', '/ch/auth.json', '/h/.codex/auth.json'])
    assert.ok(l.includes(p), p);
  assert.ok(!l.includes('/h') && !l.includes('/') && !l.some((p) => p.startsWith('relative') || p.endsWith('/c')), l.join(' '));
  // parents first: a location inside another is masked after it
  assert.ok(l.indexOf('/h/.ssh') < l.indexOf('/h/.config/gh'));
});

test('[secrets] show takes a location and all below it away, hide adds (and wins)', () => {
  const l = secretLocations({ homes: ['/h'], env: {}, setting: { show: ['~/.config', '~/.netrc'], hide: ['~/notes', '/srv/token', '~/.config/gh'] } });
  assert.ok(!l.includes('/h/.netrc') && !l.includes('/h/.config/gcloud'));
  for (const p of ['/h/notes', '/srv/token', '/h/.config/gh', '/h/.ssh']) assert.ok(l.includes(p), p);
});

test('entries are ~/path or /path, no .., not / or ~ alone', () => {
  assert.equal(checkSecretEntry('~/.foo//bar/'), '~/.foo/bar');
  assert.equal(checkSecretEntry('/srv/x'), '/srv/x');
  for (const bad of ['', 'relative', '~', '~/', '/', '~/../x', '$HOME/x', 3])
    assert.throws(() => checkSecretEntry(bad), /must|contains|would hide/, String(bad));
});

test('workspace-write, read-only and a restricted external sandbox hide what exists: a folder empty, a file empty', () => {
  for (const policy of [workspaceWrite(), { type: 'read-only' as const }, { type: 'external-sandbox' as const, network_access: 'restricted' as const }]) {
    const a = turnSandboxArgv(policy, ctx())!;
    assert.deepEqual(masks(a), HIDDEN, policy.type);
    // the masks come before the request folder (bound last) and every folder mask is made read-only
    assert.ok(a.indexOf('/h/.ssh') < a.indexOf('/rt/gate-sh/default/req'));
    assert.ok(a.join(' ').includes('--remount-ro /h/.ssh'));
  }
  assert.equal(turnSandboxArgv({ type: 'danger-full-access' }, ctx()), null, 'no sandbox: nothing hidden (docs/secrets.md)');
  // a missing location gets nothing (no mount point made on the host); no context list, no masks
  assert.ok(!turnSandboxArgv(workspaceWrite(), ctx())!.some((x) => x.includes('.gnupg')));
  assert.deepEqual(masks(turnSandboxArgv(workspaceWrite(), ctx({}, { secrets: undefined }))!), {});
  // without gate-sh's empty file, /dev/null (unreadable, bwrap binds nodev)
  assert.equal(masks(turnSandboxArgv(workspaceWrite(), ctx({}, { secretFile: undefined }))!)['/h/.netrc'], '/dev/null');
});

test('a symlinked location hides its target; a dangling one holds nothing', () => {
  const a = turnSandboxArgv(workspaceWrite(), ctx({ '/h/.ssh': '->/data/keys', '/h/.ssh/id_rsa': 'file', '/data/keys/id_rsa': 'file', '/h/.kube': '->/nowhere' }))!;
  assert.ok(a.join(' ').includes('--tmpfs /data/keys'), a.join(' '));
  assert.ok(!a.includes('/nowhere'));
});

test('a location inside a writable root is still masked on top of it; the cwd inside a hidden folder is refused', () => {
  const a = turnSandboxArgv(workspaceWrite({ writable_roots: ['/h'] }), ctx())!;
  assert.ok(a.indexOf('/h/.ssh') > a.lastIndexOf('/h', a.indexOf('/h/.ssh') - 1));
  assert.deepEqual(masks(a), HIDDEN);
  assert.throws(() => turnSandboxArgv(workspaceWrite(), ctx({ '/h/.ssh/proj': 'dir' }, { cwd: '/h/.ssh/proj' })), (e: Error) =>
    e instanceof SandboxError && /inside the secret location \/h\/\.ssh/.test(e.message));
  // the user's own entry that holds the working folder: refused with the same message, never dropped silently
  const wide = secretLocations({ homes: ['/h'], env: {}, setting: { hide: ['/ws'] } });
  assert.throws(() => turnSandboxArgv({ type: 'read-only' }, ctx({}, { secrets: wide })), /the folder \/ws lies inside the secret location \/ws/);
});

test('a profile grants what it names: the location, or only a path inside it; a folder above one grants nothing', () => {
  // reads unrestricted plus ~/.ssh named: .ssh visible, the others hidden
  let a = permissionProfileArgv({ file_system: { read: ['/', '/h/.ssh'] } }, ctx());
  assert.deepEqual(masks(a), { '/h/.aws': 'dir', '/h/.netrc': '/rt/gate-sh/empty' });
  // a file inside: the folder hidden, that file bound back (read-only)
  a = permissionProfileArgv({ file_system: { read: ['/', '/h/.ssh/id_rsa'] } }, ctx());
  assert.ok(a.join(' ').includes('--tmpfs /h/.ssh --ro-bind /h/.ssh/id_rsa /h/.ssh/id_rsa'), a.join(' '));
  // restricted reads of the home: every location in it hidden
  a = permissionProfileArgv({ file_system: { read: ['/h'] } }, ctx());
  assert.deepEqual(masks(a), HIDDEN);
  // a write grant: bound read-write, not masked
  a = permissionProfileArgv({ file_system: { write: ['/h/.aws'] } }, ctx());
  assert.ok(a.join(' ').includes('--bind /h/.aws /h/.aws'));
  assert.deepEqual(masks(a), { '/h/.ssh': 'dir', '/h/.netrc': '/rt/gate-sh/empty' });
});

test('what a profile opens, for the prompt; the line every surface shows', () => {
  const found = existingSecrets(LOCATIONS, fakeFs({ ...base }));
  const opened = secretAccess(found, { read: ['/h/.ssh', '/h/notes', '/'], write: ['/h/.aws/credentials'] });
  assert.deepEqual(opened, [
    { location: '/h/.aws', path: '/h/.aws/credentials', access: 'write' },
    { location: '/h/.ssh', path: '/h/.ssh', access: 'read' },
  ]);
  assert.equal(
    secretAccessText(opened),
    'writes /h/.aws/credentials (inside the hidden secret location /h/.aws); reads the hidden secret location /h/.ssh',
  );
  const prompt = {
    approval_id: 'a1', run_id: 'r1', origin: 'preflight' as const, command: ['cat', 'x'], display: 'cat x', cwd: '/ws',
    available_decisions: ['approved' as const, 'denied' as const], created_at: '', sandbox_permissions: 'with_additional_permissions',
    secret_access: [{ location: '/h/.ssh', path: '/h/.ssh', access: 'read' as const }],
  };
  assert.match(renderPrompt(prompt), /\n {3}secrets: reads the hidden secret location \/h\/\.ssh\n/);
  assert.match(elicitationFor(prompt).message, /\nSecrets: reads the hidden secret location \/h\/\.ssh/);
  // a name with a terminal escape is shown escaped
  assert.equal(secretAccessText([{ location: '/h/\x1b[2J', path: '/h/\x1b[2J', access: 'read' }]), 'reads the hidden secret location /h/\\e[2J');
});

test('config: [secrets] hide/show, GATE_SECRETS_HIDE/SHOW, clear errors, a caller asking for others is refused', () => {
  const c = configFromTable({ secrets: { hide: ['~/notes', '/srv/t'], show: ['~/.npmrc'] } }, 'config.toml');
  assert.deepEqual(c.secrets, { hide: ['~/notes', '/srv/t'], show: ['~/.npmrc'] });
  assert.deepEqual(configView(c).secrets, c.secrets);
  assert.deepEqual(configFromEnv({ GATE_SECRETS_SHOW: '~/.npmrc:~/.pypirc' }, DEFAULT_CONFIG).secrets, { show: ['~/.npmrc', '~/.pypirc'] });
  for (const [t, re] of [
    [{ secrets: { hide: ['relative/x'] } }, /config\.toml: 'secrets\.hide': 'relative\/x' must start with/],
    [{ secrets: { show: '~/.npmrc' } }, /'secrets\.show' must be a list of paths/],
    [{ secrets: { hidden: [] } }, /unknown key 'secrets\.hidden' \(hide, show\)/],
    [{ secrets: ['~/.x'] }, /'secrets' must be a table/],
  ] as [Record<string, unknown>, RegExp][])
    assert.throws(() => configFromTable(t, 'config.toml'), (e: Error) => e instanceof ConfigError && re.test(e.message), JSON.stringify(t));
  assert.throws(() => configFromEnv({ GATE_SECRETS_HIDE: '~' }, DEFAULT_CONFIG), /environment variable GATE_SECRETS_HIDE: 'secrets\.hide': '~'/);
  assert.match(settingsConflict(DEFAULT_CONFIG, { GATE_SECRETS_SHOW: '~/.ssh' }, 's') ?? '', /GATE_SECRETS_SHOW=~\/\.ssh asks for secrets\.show/);
  assert.equal(settingsConflict(c, { GATE_SECRETS_SHOW: '~/.npmrc', GATE_SECRETS_HIDE: '/srv/t:~/notes' }, 's'), undefined);
});
