// The argv builders on plain data (fakeFs): order of mounts, protected paths, profiles, errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permissionProfileArgv, turnSandboxArgv, type SandboxContext } from '../../../src/sandbox/bwrap-argv.js';
import { fakeFs } from '../../../src/sandbox/fs-view.js';
import { runContext } from './run-context.js';
import { workspaceWrite } from '../../../src/sandbox/policy.js';
import { SandboxError } from '../../../src/sandbox/errors.js';
import { missingProtected } from '../../../src/sandbox/protected.js';

const base = {
  '/usr': 'dir', '/etc': 'dir', '/bin': '->usr/bin', '/usr/bin': 'dir', '/tmp': 'dir', '/ws': 'dir', '/ws/src': 'dir',
  '/ws/.git': 'dir', '/other': 'dir', '/gh': 'dir', '/rt/gate-sh/default/req': 'dir', '/rt/gate-sh/default/req/c': 'dir',
  '/rt/gate-sh/default/req/c/r-1': 'dir', '/rt/gate-sh/default/approval': 'dir',
} as const;

function ctx(extra: Record<string, string | { text: string }> = {}, over: Partial<SandboxContext> = {}): SandboxContext {
  return runContext({ ...base, ...extra }, { protectedExtra: ['/gh', '/ch'], ...over });
}

/** index of the option `flag` followed by `path` (the mount target), -1 if absent */
function at(argv: string[], flag: string, path: string): number {
  for (let i = 0; i < argv.length; i++) if (argv[i] === flag && argv[i + (flag.endsWith('bind') ? 2 : 1)] === path) return i;
  return -1;
}

test('no wrapping: danger-full-access, external sandbox with network', () => {
  assert.equal(turnSandboxArgv({ type: 'danger-full-access' }, ctx()), null);
  assert.equal(turnSandboxArgv({ type: 'external-sandbox', network_access: 'enabled' }, ctx()), null);
});

test('external sandbox without network: whole disk writable, no network, approval folder hidden', () => {
  const a = turnSandboxArgv({ type: 'external-sandbox', network_access: 'restricted' }, ctx())!;
  assert.deepEqual(a.slice(0, 3), ['--bind', '/', '/']);
  assert.ok(a.includes('--unshare-net'));
  assert.ok(at(a, '--tmpfs', '/rt/gate-sh') > 0);
});

test('every wrapped run drops capabilities, dies with its parent, has its own pid namespace; ends in --', () => {
  for (const a of [turnSandboxArgv({ type: 'read-only' }, ctx())!, turnSandboxArgv(workspaceWrite(), ctx())!, permissionProfileArgv({}, ctx())]) {
    const s = a.join(' ');
    for (const f of ['--cap-drop ALL', '--die-with-parent', '--unshare-pid', '--new-session', '--proc /proc', '--dev /dev'])
      assert.ok(s.includes(f), `${f} in ${s}`);
    assert.equal(a.at(-1), '--');
  }
  assert.ok(!turnSandboxArgv({ type: 'read-only' }, ctx({}, { newSession: false }))!.includes('--new-session'));
});

test('read-only: nothing writable, no network', () => {
  const a = turnSandboxArgv({ type: 'read-only' }, ctx())!;
  assert.equal(a.filter((x) => x === '--bind').length, 1, "only the run's own client folder is writable");
  assert.ok(at(a, '--bind', '/rt/gate-sh/default/req/c/r-1') > 0);
  assert.ok(a.includes('--unshare-net'));
});

test('workspace-write: cwd, writable roots, /tmp and $TMPDIR unless excluded; network per flag', () => {
  const c = ctx({ '/tt': 'dir' }, { env: { TMPDIR: '/tt' } });
  const a = turnSandboxArgv(workspaceWrite({ writable_roots: ['/other'] }), c)!;
  for (const r of ['/ws', '/other', '/tmp', '/tt']) assert.ok(at(a, '--bind', r) > 0, r);
  assert.ok(a.includes('--unshare-net'));
  const b = turnSandboxArgv(workspaceWrite({ exclude_slash_tmp: true, exclude_tmpdir_env_var: true, network_access: true }), c)!;
  assert.equal(at(b, '--bind', '/tmp'), -1);
  assert.equal(at(b, '--bind', '/tt'), -1);
  assert.ok(!b.includes('--unshare-net'));
});

test("agent writable roots: writable while present, skipped while missing (a missing writable_roots entry stays an error)", () => {
  const a = turnSandboxArgv(workspaceWrite({ agent_writable_roots: ['/home/u/.claude/shell-snapshots'] }), ctx({ '/home/u/.claude/shell-snapshots': 'dir' }))!;
  assert.ok(at(a, '--bind', '/home/u/.claude/shell-snapshots') > 0);
  const b = turnSandboxArgv(workspaceWrite({ agent_writable_roots: ['/home/u/.claude/shell-snapshots'] }), ctx())!;
  assert.equal(at(b, '--bind', '/home/u/.claude/shell-snapshots'), -1);
  assert.ok(!b.join(' ').includes('/home/u'), 'a missing agent root leaves no trace and creates nothing');
  assert.throws(
    () => turnSandboxArgv(workspaceWrite({ agent_writable_roots: ['/home/u/.claude/shell-snapshots'], writable_roots: ['/missing'] }), ctx()),
    /writable root '\/missing' does not exist/,
  );
});

test('protected entries come after the writable binds; missing ones get no placeholder (no trace)', () => {
  const a = turnSandboxArgv(workspaceWrite(), ctx({ '/ws/.agents': 'dir', '/tmp/.codex': 'dir' }))!;
  const ws = at(a, '--bind', '/ws');
  assert.ok(at(a, '--ro-bind', '/ws/.git') > ws);
  assert.ok(at(a, '--ro-bind', '/ws/.agents') > ws);
  assert.ok(at(a, '--ro-bind', '/tmp/.codex') > at(a, '--bind', '/tmp'));
  for (const n of ['.codex', '.claude', '.gemini', '.vscode', '.idea']) assert.equal(at(a, '--tmpfs', `/ws/${n}`), -1, `missing ${n}: no placeholder`);
  assert.equal(at(a, '--ro-bind', '/ws/.mcp.json'), -1);
  assert.equal(at(a, '--tmpfs', '/tmp/.git'), -1, 'no litter in /tmp');
  assert.equal(at(a, '--tmpfs', '/ws/.agents'), -1);
  assert.equal(at(a, '--tmpfs', '/ws/.git/hooks'), -1, 'an empty .git folder (no HEAD) is read-only as a whole');
  const b = turnSandboxArgv(workspaceWrite(), ctx({ '/ws/.git': 'dir', '/ws/.mcp.json': 'file', '/ws/.cursor': 'dir' }, { env: { GATE_PROTECTED_NAMES: '.cursor:../x:a/b' } }))!;
  assert.ok(at(b, '--ro-bind', '/ws/.mcp.json') > 0, 'present: read-only');
  assert.ok(at(b, '--ro-bind', '/ws/.cursor') > 0, "the user's own names are added");
  assert.ok(!b.some((x) => x.includes('/x') || x.includes('a/b')), 'never paths');
});

test('.git by parts: pinned, code-running parts read-only, hooks blocked when missing, submodules and worktrees', () => {
  const repo = {
    '/ws/.git/HEAD': 'file', '/ws/.git/config': 'file', '/ws/.git/objects': 'dir', '/ws/.git/modules/lib/HEAD': 'file',
    '/ws/.git/modules/lib/config': 'file', '/ws/.git/modules/lib/hooks': 'dir', '/ws/.git/worktrees/wt/HEAD': 'file',
    '/ws/.git/worktrees/wt/commondir': { text: '../..\n' }, '/ws/lib/.git': { text: 'gitdir: ../.git/modules/lib\n' },
    '/ws/a/b/.git/HEAD': 'file', '/ws/a/b/.git/config': 'file', '/ws/a/b/.git/hooks': 'dir',
    '/ws/.gitmodules': { text: '[submodule "b"]\n\tpath = a/b\n\turl = x\n[submodule "c"]\n\tpath = ../escape\n' },
    '/ws/node_modules/x/.git/HEAD': 'file', '/ws/c/d/.git/HEAD': 'file', '/ws/c/d/.git/config': 'file',
  };
  const a = turnSandboxArgv(workspaceWrite(), ctx(repo))!;
  const ws = at(a, '--bind', '/ws');
  assert.ok(at(a, '--bind', '/ws/.git') > ws, 'pinned: it cannot be renamed or replaced');
  assert.equal(at(a, '--ro-bind', '/ws/.git'), -1, "git's own writes work");
  assert.ok(at(a, '--ro-bind', '/ws/.git/config') > at(a, '--bind', '/ws/.git'));
  assert.ok(at(a, '--tmpfs', '/ws/.git/hooks') > 0, 'missing hooks/ cannot be made');
  assert.ok(at(a, '--ro-bind', '/ws/.git/modules/lib/config') > 0);
  assert.ok(at(a, '--ro-bind', '/ws/.git/modules/lib/hooks') > 0);
  assert.ok(at(a, '--ro-bind', '/ws/.git/worktrees/wt/commondir') > 0);
  assert.equal(at(a, '--tmpfs', '/ws/.git/worktrees/wt/hooks'), -1, "a worktree's hooks are its common folder's");
  assert.ok(at(a, '--ro-bind', '/ws/lib/.git') > 0, "a submodule's .git file is read-only");
  assert.ok(at(a, '--ro-bind', '/ws/a/b/.git/config') > 0, 'a nested repository .gitmodules names is protected too');
  assert.equal(at(a, '--ro-bind', '/ws/c/d/.git/config'), -1, 'no walk below the first level (documented)');
  assert.ok(at(a, '--ro-bind', '/ws/a/b/.git/hooks') > 0);
  assert.ok(!a.some((x) => x.startsWith('/ws/node_modules')), 'dependency trees are not looked into');
  // outside every writable root nothing needs pinning (and nothing may become writable)
  const b = turnSandboxArgv(workspaceWrite(), ctx({ '/ws/.git': { text: 'gitdir: /other/r.git\n' }, '/other/r.git/HEAD': 'file' }))!;
  assert.equal(at(b, '--bind', '/other/r.git'), -1);
});

test('a workspace inside another writable root: a .git above it is protected; missing ones there are watched', () => {
  const a = turnSandboxArgv(workspaceWrite(), ctx({ '/tmp/a/ws': 'dir', '/tmp/a/.git/HEAD': 'file' }, { cwd: '/tmp/a/ws' }))!;
  assert.ok(at(a, '--bind', '/tmp/a/.git') > at(a, '--bind', '/tmp/a/ws'), 'pinned, by parts');
  assert.ok(at(a, '--tmpfs', '/tmp/a/.git/hooks') > 0);
  const fs = fakeFs({ ...base, '/tmp/a/b/ws': 'dir', '/tmp/a/.git': 'dir', '/tmp/a/b/ws/.vscode': 'dir' });
  assert.deepEqual(missingProtected('/tmp/a/b/ws', ['/tmp/a/b/ws', '/tmp'], fs), [
    '/tmp/a/b/ws/.codex', '/tmp/a/b/ws/.agents', '/tmp/a/b/ws/.claude', '/tmp/a/b/ws/.gemini', '/tmp/a/b/ws/.idea', '/tmp/a/b/ws/.mcp.json',
    '/tmp/a/b/.git', '/tmp/.git',
  ]);
  assert.deepEqual(missingProtected('/ws', ['/ws', '/tmp'], fakeFs(base)).filter((p) => p.endsWith('.git')), [], 'a workspace of its own: none above');
});

test('.git file (worktree) protects its gitdir target; a symlinked .git protects its target', () => {
  const a = turnSandboxArgv(
    workspaceWrite({ writable_roots: ['/other'] }),
    ctx({ '/ws/.git': { text: 'gitdir: ../other/repo.git\n' }, '/other/repo.git': 'dir' }),
  )!;
  assert.ok(at(a, '--ro-bind', '/ws/.git') > 0);
  assert.ok(at(a, '--ro-bind', '/other/repo.git') > at(a, '--bind', '/other'));
  const b = turnSandboxArgv(workspaceWrite(), ctx({ '/ws/.git': '->/ws/src/realgit', '/ws/src/realgit': 'dir' }))!;
  // no HEAD: no repository yet, read-only as a whole
  assert.ok(at(b, '--ro-bind', '/ws/src/realgit') > at(b, '--bind', '/ws'));
  assert.throws(() => turnSandboxArgv(workspaceWrite(), ctx({ '/ws/.git': '->/nowhere' })), /dangling symlink/);
});

test('gate-sh folders: read-only, missing ones uncreatable inside writable roots; runtime hidden; request folder last', () => {
  const a = turnSandboxArgv(workspaceWrite({ writable_roots: ['/other'] }), ctx({}, { protectedExtra: ['/gh', '/other/ch/rules'] }))!;
  assert.ok(at(a, '--ro-bind', '/gh') > 0);
  assert.ok(at(a, '--tmpfs', '/other/ch') > at(a, '--bind', '/other'), 'first missing component blocked');
  const hide = at(a, '--tmpfs', '/rt/gate-sh');
  const req = at(a, '--ro-bind', '/rt/gate-sh/default/req');
  const remount = at(a, '--remount-ro', '/rt/gate-sh');
  assert.ok(hide > 0 && req > hide && remount > req, a.join(' '));
  // missing runtime outside any writable root cannot be hidden: refuse rather than leave it reachable later
  assert.throws(() => turnSandboxArgv({ type: 'read-only' }, ctx({}, { hiddenPaths: ['/nope/gate-sh'] })), /cannot hide/);
});

test("the request folder: read-only in every sandbox, its clients' folder empty and read-only with only the run's own folder writable, last", () => {
  const req = '/rt/gate-sh/default/req';
  const own = `${req}/c/r-1`;
  // also where a writable root or a profile's write path contains the runtime folder
  for (const [name, a] of [
    ['read-only', turnSandboxArgv({ type: 'read-only' }, ctx())!],
    ['workspace-write', turnSandboxArgv(workspaceWrite({ writable_roots: ['/rt'] }), ctx())!],
    ['external-sandbox', turnSandboxArgv({ type: 'external-sandbox', network_access: 'restricted' }, ctx())!],
    ['profile, reads open', permissionProfileArgv({ file_system: { write: ['/rt/gate-sh'] } }, ctx())],
    ['profile, reads restricted', permissionProfileArgv({ file_system: { read: ['/other'], write: ['/ws'] } }, ctx())],
  ] as const) {
    const s = a.join(' ');
    const ro = at(a, '--ro-bind', req);
    const empty = at(a, '--tmpfs', `${req}/c`);
    const rw = at(a, '--bind', own);
    // together, in this order (a session sandbox's holder leaves the run's bind out: session-join.ts)
    assert.ok(ro > 0 && empty === ro + 3 && rw === empty + 2, `${name}: ${s}`);
    assert.ok(at(a, '--remount-ro', `${req}/c`) > rw, `${name}: the clients' folder read-only: ${s}`);
    assert.equal(at(a, '--bind', req), -1, `${name}: the request folder itself is never bound writable: ${s}`);
    assert.equal(at(a, '--bind', `${req}/c`), -1, `${name}: the clients' folder itself is never bound writable: ${s}`);
    // nothing after them mounts over the folder again (only the empty folders' --remount-ro and the options)
    const later = a.slice(rw + 3, a.indexOf('--unshare-pid'));
    assert.ok(later.every((x, i) => (i % 2 === 0 ? x === '--remount-ro' : !x.startsWith(req) || x === `${req}/c`)), `${name}: ${later.join(' ')}`);
  }
  // a clients' folder that is a symlink out of the request folder or not a folder: nothing of it mounted;
  // a run folder that is a symlink, missing, or not a folder: the clients' folder empty, nothing writable
  // (the clients inside then cannot bind a reply socket, and fail closed), never its target
  for (const [entry, what] of [[{ '/rt/gate-sh/default/req/c': '->/ws' }, 'symlink'], [{ '/rt/gate-sh/default/req/c': 'file' }, 'file']] as const) {
    const a = turnSandboxArgv(workspaceWrite(), ctx(entry))!;
    assert.ok(at(a, '--ro-bind', req) > 0, what);
    assert.equal(a.filter((x) => x.startsWith(`${req}/`)).length, 0, `${what}: ${a.join(' ')}`);
    assert.equal(a.filter((x, i) => x === '--bind' && a[i + 2] === '/ws').length, 1, `${what}: /ws bound once, as the workspace`);
  }
  for (const [entry, what] of [[{ [own]: '->/ws' }, 'symlink'], [{ [own]: 'file' }, 'file']] as const) {
    const a = turnSandboxArgv(workspaceWrite(), ctx(entry))!;
    assert.ok(at(a, '--tmpfs', `${req}/c`) > 0, what);
    assert.equal(a.filter((x, i) => x === '--bind' && a[i + 1].startsWith(req)).length, 0, `${what}: ${a.join(' ')}`);
  }
  const none = turnSandboxArgv({ type: 'read-only' }, ctx({}, { runtimeClientDir: undefined }))!;
  assert.ok(at(none, '--ro-bind', req) > 0 && at(none, '--tmpfs', `${req}/c`) > 0);
  assert.equal(none.filter((x) => x === '--bind').length, 0);
  // another run's folder somewhere else than right inside the clients' folder: not bound
  const deep = turnSandboxArgv({ type: 'read-only' }, ctx({ [`${own}/x`]: 'dir' }, { runtimeClientDir: `${own}/x` }))!;
  assert.equal(deep.filter((x) => x === '--bind').length, 0, deep.join(' '));
  // no request folder (no daemon): nothing of it mounted
  const gone = turnSandboxArgv({ type: 'read-only' }, ctx({}, { runtimeRequestDir: '/rt/gate-sh/other/req', runtimeClientDir: '/rt/gate-sh/other/req/c/r-1' }))!;
  assert.ok(!gone.some((x) => x.includes('/other/req')), gone.join(' '));
});

test('bad input: missing or relative writable roots and cwd', () => {
  assert.throws(
    () => turnSandboxArgv(workspaceWrite({ writable_roots: ['/missing'] }), ctx()),
    (e: Error) => e instanceof SandboxError && /writable root '\/missing' does not exist/.test(e.message),
  );
  assert.throws(() => turnSandboxArgv(workspaceWrite({ writable_roots: ['rel'] }), ctx()), /not an absolute path/);
  assert.throws(() => turnSandboxArgv(workspaceWrite(), ctx({}, { cwd: '/gone' })), /working folder/);
  assert.throws(() => turnSandboxArgv(workspaceWrite(), ctx({}, { cwd: '/' })), /the working folder '\/' would make the whole filesystem writable/);
  assert.throws(() => turnSandboxArgv(workspaceWrite({ writable_roots: ['/ws/up'] }), ctx({ '/ws/up': '->/' })), /whole filesystem writable/);
  assert.ok(turnSandboxArgv({ type: 'read-only' }, ctx({}, { cwd: '/' })), 'read-only from / is fine');
});

test('profile: exactly the write paths, resolved; reads restricted to platform folders plus the list', () => {
  const a = permissionProfileArgv({ file_system: { write: ['/ws/src/', '/ws/link'], read: ['/other'] } }, ctx({ '/ws/link': '->/ws/src' }));
  assert.equal(a.filter((x) => x === '--bind').length, 2, a.join(' ')); // /ws/src + the run's client folder
  assert.ok(at(a, '--bind', '/ws/src') > at(a, '--tmpfs', '/tmp'));
  assert.ok(at(a, '--ro-bind', '/other') > at(a, '--tmpfs', '/tmp'), 'private /tmp first, then the read paths');
  assert.equal(at(a, '--ro-bind', '/'), -1);
  assert.ok(at(a, '--ro-bind', '/usr') >= 0 && at(a, '--ro-bind', '/other') > 0);
  assert.ok(at(a, '--symlink', 'usr/bin') >= 0, 'symlinked /bin recreated');
  const g = permissionProfileArgv({ file_system: { read: ['/other'] } }, ctx({ '/opt/gate': 'dir' }, { alwaysReadable: ['/opt/gate'] }));
  assert.ok(at(g, '--ro-bind', '/opt/gate') > 0, "gate-sh's own files stay readable (libgate.so, shims)");
  assert.ok(a.includes('--unshare-net'));
  assert.equal(a[a.indexOf('--chdir') + 1], '/', 'the cwd is not visible: start in /');
});

test('profile: network and read-all', () => {
  const a = permissionProfileArgv({ network: true }, ctx());
  assert.deepEqual(a.slice(0, 3), ['--ro-bind', '/', '/']);
  assert.ok(!a.includes('--unshare-net'));
  assert.equal(a.filter((x) => x === '--bind').length, 1);
  assert.equal(at(a, '--tmpfs', '/tmp'), -1, 'reads unrestricted: the host /tmp, read-only');
});

test('profile: widening or ambiguous paths are errors, never silently widened', () => {
  const c = ctx();
  const cases: Array<[unknown, RegExp]> = [
    [{ file_system: { write: ['/'] } }, /write access to '\/'/],
    [{ file_system: { write: ['relative/out'] } }, /relative/],
    [{ file_system: { write: ['/ws/../etc'] } }, /'\.\.'/],
    [{ file_system: { read: ['../x'] } }, /relative/],
    [{ file_system: { write: ['/missing'] } }, /does not exist/],
    [{ file_system: { write: '/ws' } }, /must be a list/],
    [{ network: 'yes' }, /network must be/],
  ];
  for (const [p, re] of cases)
    assert.throws(
      () => permissionProfileArgv(p as never, c),
      (e: Error) => e instanceof SandboxError && re.test(e.message),
      JSON.stringify(p),
    );
  assert.throws(() => permissionProfileArgv({ file_system: { write: ['/rootlink'] } }, ctx({ '/rootlink': '->/' })), /resolves to '\/'/);
});

test('profile: a write path inside a protected folder stays writable; critical paths stay read-only under it', () => {
  const c = ctx(
    { '/ch/skills/s/out': 'dir', '/ch/rules': 'dir' },
    { protectedExtra: ['/gh', '/ch'], critical: [{ path: '/ch/rules' }, { path: '/ch/config.toml', file: true }] },
  );
  const a = permissionProfileArgv({ file_system: { write: ['/ch/skills/s/out'] } }, c);
  const prot = at(a, '--ro-bind', '/ch');
  const first = a.indexOf('/ch/skills/s/out') - 1;
  const again = a.lastIndexOf('/ch/skills/s/out') - 2;
  assert.ok(first < prot && again > prot && a[again] === '--bind', a.join(' '));
  const b = permissionProfileArgv({ file_system: { write: ['/ch'] } }, c);
  assert.ok(b.lastIndexOf('/ch') - 2 > at(b, '--ro-bind', '/ch') && b[b.lastIndexOf('/ch') - 2] === '--bind', 'naming the folder reopens it');
  assert.ok(at(b, '--ro-bind', '/ch/rules') > b.lastIndexOf('/ch'), 'rules stay read-only under a declared write of their parent');
  const h = permissionProfileArgv({ file_system: { write: ['/'.concat('ws')] } }, ctx({ '/ws/ch': 'dir' }, { protectedExtra: ['/ws/ch'] }));
  assert.equal(h.filter((x) => x === '/ws/ch').length, 2, 'a write path containing a protected folder does not reopen it: ' + h.join(' '));
  assert.equal(b[at(b, '--ro-bind', '/ch/config.toml') + 1], '/dev/null', 'a missing config file is blocked by an empty file');
  const t = turnSandboxArgv(workspaceWrite({ writable_roots: ['/ch'] }), c)!;
  assert.ok(at(t, '--ro-bind', '/ch') > at(t, '--bind', '/ch'), 'the turn sandbox keeps the whole folder read-only');
});
