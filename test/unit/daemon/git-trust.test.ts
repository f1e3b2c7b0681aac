/**
 * Whether an escalated git may leave the sandbox (src/daemon/git-trust.ts): what the repository's config
 * names (a hooks folder, an included file), what the command's arguments and git variables name, and a
 * program-naming option. The repositories are plain folders and files this test writes (no git, no
 * process); "changed since" is a `since` before or after they were written. Not pure: a temp folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configEntries, gitEscalationRefusal } from '../../../src/daemon/git-trust.js';

/** A minimal repository folder: HEAD, objects/, config (its text), hooks/. */
function repo(dir: string, config = '[core]\n\tbare = false\n', bare = false): void {
  const g = bare ? dir : join(dir, '.git');
  mkdirSync(join(g, 'objects'), { recursive: true });
  mkdirSync(join(g, 'hooks'), { recursive: true });
  writeFileSync(join(g, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(g, 'config'), config);
}

function place(): { ws: string; home: string; done: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'git-trust-')));
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  mkdirSync(ws);
  mkdirSync(home);
  return { ws, home, done: () => rmSync(root, { recursive: true, force: true }) };
}

const FUTURE = new Date(Date.now() + 3_600_000);

test('configEntries: sections, subsections, one-line sections, keys without a value', () => {
  const text = '[core]\n\thooksPath = .githooks\n[includeIf "gitdir:~/w/"]\n  path = ~/w.gitconfig\n[alias] x = !./run.sh\n[x]\n\tflag\n';
  assert.deepEqual(configEntries(text), [
    { key: 'core.hooksPath', value: '.githooks' },
    { key: 'includeIf.gitdir:~/w/.path', value: '~/w.gitconfig' },
    { key: 'alias.x', value: '!./run.sh' },
    { key: 'x.flag', value: '' },
  ]);
});

test('a hooksPath folder in the working tree: trusted until a hook in it changes', () => {
  const { ws, home, done } = place();
  try {
    repo(ws, '[core]\n\thooksPath = .githooks\n');
    mkdirSync(join(ws, '.githooks'));
    writeFileSync(join(ws, '.githooks', 'pre-commit'), '#!/bin/sh\n');
    // the hooks folder is the writable one (the repository's own parts are the sandbox's read-only ones)
    const base = { cwd: ws, writable: [join(ws, '.githooks')], home, argv: ['git', 'commit'] };
    assert.equal(gitEscalationRefusal({ ...base, since: FUTURE }), null);
    const r = gitEscalationRefusal({ ...base, since: new Date(0) });
    assert.match(r ?? '', /\.githooks/);
    // outside the writable folders nothing counts as the sandbox's
    assert.equal(gitEscalationRefusal({ ...base, writable: [home], since: new Date(0) }), null);
  } finally {
    done();
  }
});

test('an included config file and what it names count; an include outside the writable folders does not', () => {
  const { ws, home, done } = place();
  try {
    // relative to the config file's folder (.git): the working tree's shared/ (spelled so for test/docs/links)
    repo(ws, `[include]\n\tpath = ${'..'}/shared/x.gitconfig\n`);
    mkdirSync(join(ws, 'shared'));
    writeFileSync(join(ws, 'shared', 'x.gitconfig'), '[user]\n\tname = A\n');
    const base = { cwd: ws, writable: [join(ws, 'shared')], home, argv: ['git', 'commit'] };
    assert.match(gitEscalationRefusal({ ...base, since: new Date(0) }) ?? '', /shared\/x\.gitconfig/);
    assert.equal(gitEscalationRefusal({ ...base, writable: [home], since: new Date(0) }), null);
  } finally {
    done();
  }
});

test('argv: a local repository (push target) counts, a pathspec does not, a program-naming option always does', () => {
  const { ws, home, done } = place();
  try {
    repo(join(ws, 'me'));
    repo(join(ws, 'evil.git'), '[core]\n\tbare = true\n', true);
    mkdirSync(join(ws, 'me', 'src'));
    writeFileSync(join(ws, 'me', 'src', 'a.c'), 'int x;\n');
    const me = join(ws, 'me');
    // everything is "changed since"; the repository's own parts are made untouchable by leaving them out of
    // the writable folders, so only what argv names is judged
    const base = { cwd: me, writable: [join(ws, 'evil.git'), join(me, 'src')], home, since: new Date(0) };
    assert.match(gitEscalationRefusal({ ...base, argv: ['git', 'push', '../evil.git', 'HEAD'] }) ?? '', /evil\.git\/(config|hooks)/);
    assert.match(gitEscalationRefusal({ ...base, argv: ['git', 'push', 'file://' + join(ws, 'evil.git')] }) ?? '', /evil\.git/);
    assert.equal(gitEscalationRefusal({ ...base, argv: ['git', 'commit', '-m', 'x', 'src', 'src/a.c'] }), null);
    assert.match(gitEscalationRefusal({ ...base, since: FUTURE, argv: ['git', 'push', '--receive-pack=sh -c x', 'origin'] }) ?? '', /--receive-pack/);
    assert.match(gitEscalationRefusal({ ...base, since: FUTURE, argv: ['git', 'clone', '--template', '/t', 'a'] }) ?? '', /--template/);
  } finally {
    done();
  }
});

test('GIT_DIR names the repository git uses; other GIT_* values naming a path count too', () => {
  const { ws, home, done } = place();
  try {
    repo(join(ws, 'me'));
    repo(join(ws, 'evil'));
    const me = join(ws, 'me');
    const base = { cwd: me, writable: [join(ws, 'evil')], home, since: new Date(0), argv: ['git', 'commit'] };
    assert.equal(gitEscalationRefusal(base), null);
    assert.match(gitEscalationRefusal({ ...base, env: { GIT_DIR: '../evil/.git' } }) ?? '', /evil\/\.git\/(config|hooks)/);
    writeFileSync(join(ws, 'evil', 'cfg'), '[core]\n');
    assert.match(gitEscalationRefusal({ ...base, env: { GIT_CONFIG_GLOBAL: '../evil/cfg' } }) ?? '', /evil\/cfg/);
    assert.equal(gitEscalationRefusal({ ...base, env: { GIT_CONFIG_GLOBAL: '/dev/null' } }), null);
  } finally {
    done();
  }
});

test("an earlier daemon's period: a repository made then, where its runs could write, is the sandbox's; a config edited then is not", () => {
  const { ws, home, done } = place();
  try {
    const t0 = Date.now() - 1000;
    repo(join(ws, 'made'));
    const made = join(ws, 'made');
    const base = { cwd: made, writable: [ws], home, since: FUTURE, argv: ['git', 'commit'] };
    assert.equal(gitEscalationRefusal(base), null);
    assert.match(gitEscalationRefusal({ ...base, earlier: [[t0, Date.now() + 1000, [ws]]] }) ?? '', /made\/\.git, which was made while/);
    // made elsewhere than that period's runs could write: the user's
    assert.equal(gitEscalationRefusal({ ...base, earlier: [[t0, Date.now() + 1000, [home]]] }), null);
    // made before the period, its config rewritten during it (git config on the host): the user's
    assert.equal(gitEscalationRefusal({ ...base, earlier: [[Date.now() + 500, Date.now() + 1000, [ws]]] }), null);
  } finally {
    done();
  }
});
