/**
 * An escalated git never runs code a sandboxed run could have written (src/daemon/git-trust.ts). The routes
 * red-teamed here, each with `git commit` / `git push` allowed out of the sandbox by a rule (or a `prompt`
 * rule and a person who approves): a hooks folder that the repository's own, trusted config names in the
 * workspace (`core.hooksPath = .githooks`, as husky sets it), a config file the trusted config includes from
 * the workspace (`include.path`), a push to a repository the sandbox made (its `pre-receive` hook runs on
 * the receiving side), and a push whose `--receive-pack` names a command. Each is shown to run nothing
 * outside, and the very same command in a clean repository still leaves the sandbox (the user's own hook
 * writes where no sandbox may). The user's repositories are made by the test on the host, as the user
 * would; the attack goes through gate-sh, as the agent would. Real daemon, gate-sh, bubblewrap and git.
 * Test-only; the trust boundary is the sandbox's writable folders.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { asInlineCode, gateSh, run } from '../exec-gate/helpers.js';
import { GATE_SH } from '../helpers/env.js';
import { type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

const ID = {
  GIT_AUTHOR_NAME: 'A U Thor',
  GIT_AUTHOR_EMAIL: 'a@example.com',
  GIT_COMMITTER_NAME: 'A U Thor',
  GIT_COMMITTER_EMAIL: 'a@example.com',
};

/** A folder no sandbox may write (outside every writable root and /tmp): a file there means "ran outside". */
function markFolder(): string {
  const mark = mkdtempSync('/var/lib/gate-sh-test-gitmark-');
  chmodSync(mark, 0o755);
  process.on('exit', () => rmSync(mark, { recursive: true, force: true }));
  return mark;
}

function daemon(rules: string[], autoApprove = false): Promise<DaemonProc> {
  return startDaemon({
    rules,
    workspace: 'ws',
    autoApprove,
    env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1', ...ID },
  });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...ID }, encoding: 'utf8' });
}

const hook = (file: string) => `#!/bin/sh\ntouch ${file} 2>/dev/null\nexit 0\n`;

/** The user's repository (made on the host): one commit, a pre-commit hook of theirs that marks `name`. */
function userRepo(dir: string, mark: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README'), 'hello\n');
  git(dir, 'add', 'README');
  git(dir, 'commit', '-q', '-m', 'start');
  writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), hook(join(mark, name)));
  chmodSync(join(dir, '.git', 'hooks', 'pre-commit'), 0o755);
}

/** A user's repository in husky's layout: its own config names a hooks folder in the working tree, whose
 * pre-commit leaves `hookMark` in `mark`. */
function huskyRepo(dir: string, mark: string, name: string, hookMark: string): void {
  userRepo(dir, mark, name);
  mkdirSync(join(dir, '.githooks'));
  writeFileSync(join(dir, '.githooks', 'pre-commit'), hook(join(mark, hookMark)));
  chmodSync(join(dir, '.githooks', 'pre-commit'), 0o755);
  git(dir, 'config', 'core.hooksPath', '.githooks');
}

const RULES = ['prefix_rule(pattern=["git", "commit"], decision="allow")', 'prefix_rule(pattern=["git", "push"], decision="allow")'];

/** The audit log's records of an escalated git kept in the sandbox, each with its reason. */
const kept = (rig: DaemonProc) => readFileSync(rig.paths.auditLog, 'utf8').split('\n').filter((l) => l.includes('escalation kept in the sandbox: git would')).length;

const shellQuote = (s: string) => `'${s.replace(/'/g, () => "'\\''")}'`;

test('git escalation: a clean repository escalates; hooksPath, include.path, a local push target and --receive-pack run nothing outside', async (t) => {
  t.after(killAll);
  const rig = await daemon(RULES);
  t.after(() => rig.close());
  const mark = markFolder();

  // the clean repository: git commit leaves the sandbox by the rule (the user's hook writes outside)
  const clean = join(rig.ws, 'clean');
  userRepo(clean, mark, 'clean');
  // husky's layout: the repository's own config names a hooks folder in the working tree
  const husky = join(rig.ws, 'husky');
  huskyRepo(husky, mark, 'husky-git-hook', 'husky-user');
  // a shared config in the working tree, included by the repository's config
  const inc = join(rig.ws, 'inc');
  userRepo(inc, mark, 'inc-user');
  writeFileSync(join(inc, '.gitconfig-shared'), '[user]\n\tname = A U Thor\n');
  git(inc, 'config', 'include.path', '../.gitconfig-shared');
  // a bare repository of the user's to push to
  const bare = join(rig.ws, 'bare.git');
  git(rig.ws, 'init', '-q', '--bare', bare);

  const c = await gateSh(rig, 'git commit -q --allow-empty -m clean', { cwd: clean, timeoutMs: 60_000 });
  assert.ok(existsSync(join(mark, 'clean')), `git commit in a clean repository did not leave the sandbox: ${c.stderr}`);
  const h0 = await gateSh(rig, 'git commit -q --allow-empty -m before', { cwd: husky, timeoutMs: 60_000 });
  assert.ok(existsSync(join(mark, 'husky-user')), `the user's hooksPath hook did not run outside before the attack: ${h0.stderr}`);
  const p0 = await gateSh(rig, `git push -q ${bare} HEAD:refs/heads/clean`, { cwd: clean, timeoutMs: 60_000 });
  assert.equal(p0.code, 0, p0.stderr);
  assert.equal(git(bare, 'rev-parse', 'clean').trim(), git(clean, 'rev-parse', 'HEAD').trim());

  // each attack: a sandboxed run plants, then a run of the allowed git command alone (a script of only
  // allowed commands is what an allow rule takes out of the sandbox at pre-flight); the same command as the
  // model's inline code meets the rule at its exec instead (asInlineCode)
  const attacks: { name: string; cwd: string; plant: string; git: string }[] = [
    // 1. the hooks folder the trusted config names, written by the sandbox
    { name: 'hookspath', cwd: husky, plant: `printf ${shellQuote(hook(join(mark, 'hookspath')))} > .githooks/pre-commit`, git: 'git commit -q --allow-empty -m x' },
    // 2. the included config file, written by the sandbox, naming a hooks folder it also wrote
    {
      name: 'include',
      cwd: inc,
      plant:
        `mkdir -p h && printf ${shellQuote(hook(join(mark, 'include')))} > h/pre-commit && chmod +x h/pre-commit && ` +
        `printf '[core]\\n\\thooksPath = %s/h\\n' "$PWD" > .gitconfig-shared`,
      git: 'git commit -q --allow-empty -m x',
    },
    // 3. a push to a repository the sandbox made: its pre-receive hook runs on the receiving side
    {
      name: 'push-target',
      cwd: clean,
      plant:
        `git init -q --bare ../evil.git && printf ${shellQuote(hook(join(mark, 'push-target')))} > ../evil.git/hooks/pre-receive && ` +
        'chmod +x ../evil.git/hooks/pre-receive',
      git: 'git push -q ../evil.git HEAD:refs/heads/REF',
    },
    // 4. a push naming the command that receives it (git runs it with the shell for a local path)
    { name: 'receive-pack', cwd: clean, plant: 'true', git: `git push -q --receive-pack=${shellQuote(`touch ${join(mark, 'receive-pack')}; git-receive-pack`)} ${bare} HEAD:refs/heads/REF` },
  ];
  const escaped: string[] = [];
  const unexplained: string[] = [];
  for (const a of attacks) {
    const p = await gateSh(rig, `${a.plant} && echo planted`, { cwd: a.cwd, timeoutMs: 60_000 });
    assert.equal(p.stdout, 'planted\n', `${a.name}: ${p.stderr}`);
    // (a new branch each time: a push with nothing to push runs no hook)
    for (const [how, script] of [['rule at pre-flight', a.git.replace('REF', 'pre')], ['rule at the exec', asInlineCode(a.git.replace('REF', 'exec'))]]) {
      const before = kept(rig);
      const r = await gateSh(rig, script, { cwd: a.cwd, timeoutMs: 60_000 });
      if (existsSync(join(mark, a.name))) escaped.push(`${a.name} (${how}): ${r.stderr}`);
      else if (kept(rig) <= before) unexplained.push(`${a.name} (${how}): ${r.stderr}`);
      // gate-sh says so when the pre-flight kept it (at the exec only the logs do: an exec's reply carries no text)
      else if (how === 'rule at pre-flight' && !/^gate-sh: escalation kept in the sandbox: git would /m.test(r.stderr))
        unexplained.push(`${a.name} (${how}), gate-sh said nothing: ${r.stderr}`);
      rmSync(join(mark, a.name), { force: true });
    }
  }
  assert.deepEqual(escaped, [], 'code the sandbox wrote ran outside it');
  assert.deepEqual(unexplained, [], 'kept in the sandbox without a reason (the audit log; gate-sh at pre-flight)');
  // the clean repository still escalates after all this
  rmSync(join(mark, 'clean'));
  const again = await gateSh(rig, 'git commit -q --allow-empty -m again', { cwd: clean, timeoutMs: 60_000 });
  assert.ok(existsSync(join(mark, 'clean')), `git commit in the clean repository no longer leaves the sandbox: ${again.stderr}`);
  assert.deepEqual(readdirSync(mark).sort(), ['clean', 'husky-user']);
});

/** `gate-sh --escalate -c script`: the model asks to run the script outside the sandbox (a person decides). */
const escalated = (rig: DaemonProc, script: string, cwd: string) =>
  run(GATE_SH, ['--escalate', '-c', script], { env: rig.env, cwd, timeoutMs: 60_000 });

test('git escalation: an approved --escalate git commit is kept in the sandbox when the sandbox wrote its hooksPath hook', async (t) => {
  t.after(killAll);
  const rig = await daemon([], true);
  t.after(() => rig.close());
  const mark = markFolder();
  const husky = join(rig.ws, 'husky');
  huskyRepo(husky, mark, 'git-hook', 'user');
  const before = await escalated(rig, 'git commit -q --allow-empty -m x', husky);
  assert.ok(existsSync(join(mark, 'user')), `the approved commit did not leave the sandbox: ${before.stderr}`);
  assert.equal(kept(rig), 0);
  const p = await gateSh(rig, `printf ${shellQuote(hook(join(mark, 'planted')))} > .githooks/pre-commit`, { cwd: husky, timeoutMs: 60_000 });
  assert.equal(p.code, 0, p.stderr);
  const asked = rig.prompts.length;
  const r = await escalated(rig, 'git commit -q --allow-empty -m y', husky);
  assert.match(r.stderr, /^gate-sh: escalation kept in the sandbox: git would read .*\.githooks\/pre-commit/m, r.stderr);
  // the approval of `git commit` is not one of the hook: git stays in the sandbox, and the hook (a program
  // the sandbox wrote, run by git) leaves it only if a person is asked about it by name and approves
  // (this approver approves everything)
  assert.ok(kept(rig) > 0, 'the approved git commit was not kept in the sandbox');
  // the on-failure rerun: the script's sandboxed attempt fails on a read-only folder, the person approves
  // running it again outside, and the rerun's git is kept in the sandbox all the same
  const keptBefore = kept(rig);
  const promptsBefore = rig.prompts.length;
  const rr = await gateSh(rig, `git commit -q --allow-empty -m r; touch ${join(mark, 'probe')}`, { cwd: husky, timeoutMs: 60_000 });
  assert.ok(rig.prompts.length > promptsBefore, `no rerun was offered: ${rr.stderr}`);
  assert.ok(kept(rig) > keptBefore, `the rerun's git was not kept in the sandbox: ${rr.stderr}`);
  assert.ok(!existsSync(join(mark, 'probe')), `the rerun left the sandbox: ${rr.stderr}`);
  if (existsSync(join(mark, 'planted')))
    assert.ok(
      rig.prompts.slice(asked).some((e) => JSON.stringify(e).includes('.githooks/pre-commit')),
      `the planted hook ran outside without a prompt naming it: ${JSON.stringify(rig.prompts.slice(asked))}`,
    );
});

test('git escalation: a repository a sandboxed run of an earlier daemon made never escalates after a restart; the user\'s still does', async (t) => {
  t.after(killAll);
  const first = await daemon(RULES);
  const mark = markFolder();
  const clean = join(first.ws, 'clean');
  userRepo(clean, mark, 'clean');
  const plant = await gateSh(
    first,
    `git init -q sub && printf ${shellQuote(hook(join(mark, 'restart')))} > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit && echo planted`,
    { timeoutMs: 60_000 },
  );
  assert.equal(plant.stdout, 'planted\n', plant.stderr);
  // the user edits their repository's config on the host meanwhile (git rewrites the file)
  git(clean, 'config', 'remote.origin.url', 'https://example.com/r.git');
  await first.stop();
  const rig = await startDaemon({
    te: first.te,
    rules: RULES,
    workspace: 'ws',
    env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1', ...ID },
  });
  t.after(() => rig.close());
  // the new daemon's very first run: the allowed commit in the planted repository
  const r = await gateSh(rig, 'git commit -q --allow-empty -m x', { cwd: join(rig.ws, 'sub'), timeoutMs: 60_000 });
  assert.ok(!existsSync(join(mark, 'restart')), `the hook a sandboxed run planted before the restart ran outside:\n${r.stdout}${r.stderr}`);
  assert.ok(kept(rig) > 0, 'no reason in the audit log');
  const c = await gateSh(rig, 'git commit -q --allow-empty -m y', { cwd: clean, timeoutMs: 60_000 });
  assert.ok(existsSync(join(mark, 'clean')), `the user's repository no longer escalates after the restart: ${c.stderr}`);
});
