/**
 * Real git work through `gate-sh -lc` under the default policy (on-request, workspace-write, no rules, no
 * approver), compared with plain bash; and the attacks on git's code-running parts (issue 29 points 4-5,
 * issue 30 findings 3, 4, 6). Real daemon, real gate-sh, real bash, bubblewrap, exec gate, git and make.
 * The user's repository, its commit hook and the "outside" marker folder are made by the test on the host,
 * as the user would; everything the attack does is done through gate-sh, as the agent would.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { GATE, GATE_SH } from '../helpers/env.js';
import { run, type Result } from '../helpers/run.js';
import { type DaemonProc, startDaemon, waitFor } from '../helpers/daemon.js';

const ID = {
  GIT_AUTHOR_NAME: 'A U Thor',
  GIT_AUTHOR_EMAIL: 'a@example.com',
  GIT_COMMITTER_NAME: 'A U Thor',
  GIT_COMMITTER_EMAIL: 'a@example.com',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** A folder no sandboxed run can write (workspace-write makes /tmp writable): markers of "ran outside". */
let outside: string;

function daemon(rules: string[] = []): Promise<DaemonProc> {
  return startDaemon({
    rules,
    workspace: 'ws',
    env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1', ...ID },
  });
}

function gateSh(rig: DaemonProc, script: string, cwd = rig.ws): Promise<Result> {
  return run(GATE_SH, ['-lc', script], { env: rig.env, cwd, timeoutMs: 60_000 });
}

function bash(rig: DaemonProc, script: string, cwd: string): Promise<Result> {
  return run('/bin/bash', ['-lc', script], { env: rig.env, cwd, timeoutMs: 60_000 });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...ID, HOME: cwd }, encoding: 'utf8' });
}

/** The user's repository with one commit and a commit hook of their own (made on the host). */
function userRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README'), 'hello\n');
  git(dir, 'add', 'README');
  git(dir, 'commit', '-q', '-m', 'start');
  writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho "user hook ran"\n');
  chmodSync(join(dir, '.git', 'hooks', 'pre-commit'), 0o755);
}

before(() => {
  outside = mkdtempSync('/var/tmp/gate-git-out-');
});
after(() => rmSync(outside, { recursive: true, force: true }));

const WORKFLOW = [
  'echo a > a.txt && git add a.txt && git commit -q -m one',
  'echo b >> a.txt && git stash -q && git stash list | wc -l',
  'git checkout -q -b feature && echo c > c.txt && git add c.txt && git commit -q -m two',
  'git checkout -q main && git merge -q --no-edit feature && git log --format=%s',
  'git stash pop -q && git status --short && git rev-parse HEAD',
].join(' && ');

test('a git workflow (add, commit with the user hook, stash, checkout -b, merge) runs as under bash, no prompt', async () => {
  const rig = await daemon();
  try {
    const twin = join(rig.te.dir, 'twin');
    userRepo(rig.ws);
    userRepo(twin);
    const want = await bash(rig, WORKFLOW, twin);
    assert.equal(want.code, 0, want.stderr);
    const got = await gateSh(rig, WORKFLOW);
    assert.equal(got.stderr, want.stderr);
    assert.equal(got.stdout, want.stdout);
    assert.equal(got.code, 0);
    assert.match(got.stderr, /user hook ran\n/, "the user's own hook runs (git gives hooks stderr as stdout)");
  } finally {
    await rig.close();
  }
});

/** Every way a sandboxed script could make git run its code later, outside the sandbox. */
function plants(marker: string): string {
  const hook = `#!/bin/sh\\ntouch ${marker}\\n`;
  return [
    `printf '${hook}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
    `printf '${hook}' > .git/hooks/pre-commit`,
    `printf '[core]\\n\\tfsmonitor = ${marker}.sh\\n' >> .git/config`,
    `git config core.hooksPath "$PWD/myhooks"`,
    `mv .git/hooks .git/old-hooks`,
    `mv .git .git-moved`,
    `printf '[core]\\n\\tfsmonitor = ${marker}.sh\\n' > .git/config.worktree`,
    `echo ok-writes-still-work > .git/description`,
  ].join('; ');
}

test('a script, a Makefile and a nested repository cannot write git hooks or config (in place or by moving .git)', async () => {
  const rig = await daemon();
  try {
    userRepo(rig.ws);
    userRepo(join(rig.ws, 'sub'));
    const hooks = readdirSync(join(rig.ws, '.git', 'hooks')).sort();
    const config = readFileSync(join(rig.ws, '.git', 'config'), 'utf8');
    const m = join(outside, 'm');
    const direct = await gateSh(rig, plants(m));
    writeFileSync(join(rig.ws, 'Makefile'), `all:\n\tcd sub && ${plants(m).replaceAll('$', '$$')}\n`);
    const viaMake = await gateSh(rig, 'make -s');
    for (const dir of [rig.ws, join(rig.ws, 'sub')]) {
      assert.deepEqual(readdirSync(join(dir, '.git', 'hooks')).sort(), hooks, `${dir}: hooks unchanged`);
      assert.equal(readFileSync(join(dir, '.git', 'config'), 'utf8'), config, `${dir}: config unchanged`);
      assert.ok(!existsSync(join(dir, '.git-moved')), `${dir}: .git not moved`);
      assert.equal(readFileSync(join(dir, '.git', 'description'), 'utf8'), 'ok-writes-still-work\n', `${dir}: git's own files stay writable`);
    }
    assert.match(direct.stderr, /Read-only file system|Device or resource busy/);
    assert.match(viaMake.stderr, /Read-only file system|Device or resource busy/);
    // the user's own git after the attack runs nothing planted
    git(rig.ws, 'checkout', '-q', '-b', 'after');
    git(join(rig.ws, 'sub'), 'status');
    assert.ok(!existsSync(m), 'no planted code ran');
  } finally {
    await rig.close();
  }
});

test('no trace: a run leaves nothing in a folder without .git or .codex, and ls -la inside shows what bash shows', async () => {
  const rig = await daemon();
  try {
    const twin = join(rig.te.dir, 'twin');
    for (const d of [rig.ws, twin]) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'f'), 'x\n');
    }
    const listing = "ls -la | awk '{print $1, $NF}'";
    const want = await bash(rig, listing, twin);
    const got = await gateSh(rig, listing);
    assert.equal(got.stdout, want.stdout, got.stderr);
    assert.deepEqual(readdirSync(rig.ws).sort(), ['f']);
    // and `git init` works in it, as under bash: the repository is the agent's to make
    const init = await gateSh(rig, 'git init -q && git add f && git commit -q -m f && git log --format=%s');
    assert.equal(init.stdout, 'f\n', init.stderr);
  } finally {
    await rig.close();
  }
});

/** Waits until the daemon has handled the run's end (it moves aside what the run planted then). */
function settled(dir: string, gone: string[]): Promise<true> {
  return waitFor(() => gone.every((n) => !existsSync(join(dir, n))) || undefined, `${gone.join(', ')} moved aside`);
}

test('issue 30 finding 3: an allowed, escalated git never reads configuration the sandbox wrote', async () => {
  const rig = await daemon(['prefix_rule(pattern=["git", "status"], decision="allow")']);
  try {
    userRepo(rig.ws);
    const m = join(outside, 'f3');
    // a sandboxed run plants: an fsmonitor program, a HOME and an XDG config naming it, a nested repository
    const cfg = (file: string) => `printf '[core]\\n\\tfsmonitor = %s/fsm.sh\\n' "$PWD" > ${file}`;
    const plant = await gateSh(
      rig,
      `printf '#!/bin/sh\\ntouch ${m}-$(basename "$PWD")-$FSM\\n' > fsm.sh && chmod +x fsm.sh && mkdir -p h x/git && ${cfg('h/.gitconfig')} && ` +
        `${cfg('x/git/config')} && git init -q nested && (cd nested && printf '[core]\\n\\tfsmonitor = %s/fsm.sh\\n' "$(cd .. && pwd)" >> .git/config) && echo planted`,
    );
    assert.equal(plant.stdout, 'planted\n', plant.stderr);
    const attacks = [
      'cd nested && git status',
      'export HOME=$PWD/h FSM=home && git status',
      'env HOME=$PWD/h FSM=env-home git status',
      'export XDG_CONFIG_HOME=$PWD/x FSM=xdg && git status',
      'env XDG_CONFIG_HOME=$PWD/x FSM=env-xdg git status',
      'git -C nested status',
    ];
    for (const a of attacks) {
      const r = await gateSh(rig, `${a} >/dev/null; echo $?`);
      assert.equal(r.stdout, '0\n', `${a}\n${r.stderr}`);
    }
    assert.deepEqual(readdirSync(outside).filter((f) => f.startsWith('f3')), [], 'the planted fsmonitor never ran outside the sandbox');
  } finally {
    await rig.close();
  }
});

test('issue 30 finding 4: a .git planted above the workspace (under /tmp) never runs, and is gone after the run', async () => {
  const rig = await daemon(['prefix_rule(pattern=["git", "status"], decision="allow")']);
  try {
    const m = join(outside, 'f4');
    const parent = rig.te.dir;
    const r = await gateSh(
      rig,
      `git init -q ../; printf '#!/bin/sh\\ntouch ${m}\\n' > ../.git/hooks/fsm; chmod +x ../.git/hooks/fsm; ` +
        `printf '[core]\\n\\tfsmonitor = %s\\n' "$(cd .. && pwd)/.git/hooks/fsm" >> ../.git/config; git status >/dev/null 2>&1; echo $?`,
    );
    assert.equal(r.stdout, '0\n', r.stderr);
    await settled(parent, ['.git']);
    assert.ok(readdirSync(parent).some((n) => n.startsWith('.git.gate-sh-planted-')), 'moved aside, kept for the user to see');
    // the user's own git in the workspace afterwards finds no planted repository above it
    assert.throws(() => git(rig.ws, 'status'), /not a git repository/);
    assert.ok(!existsSync(m), 'nothing planted ran outside the sandbox');
  } finally {
    await rig.close();
  }
});

test("issue 30 finding 6: agents' configuration cannot be planted (moved aside after the run), nor changed when present", async () => {
  const rig = await daemon();
  try {
    mkdirSync(join(rig.ws, '.vscode'));
    writeFileSync(join(rig.ws, '.vscode', 'settings.json'), '{}\n');
    const names = ['.claude', '.agents', '.gemini', '.codex', '.idea'];
    const r = await gateSh(
      rig,
      `for d in ${names.join(' ')}; do mkdir -p $d && echo '{"hooks":{}}' > $d/settings.json; done; ` +
        `echo '{"tasks":1}' > .vscode/tasks.json || echo tasks refused; echo '{"mcpServers":{}}' > .mcp.json; echo end`,
    );
    assert.equal(r.stdout, 'tasks refused\nend\n', r.stderr);
    await settled(rig.ws, [...names, '.mcp.json']);
    assert.deepEqual(readdirSync(rig.ws).filter((n) => !n.includes('.gate-sh-planted-')), ['.vscode']);
    assert.deepEqual(readdirSync(join(rig.ws, '.vscode')), ['settings.json']);
    // (each move's record follows it: the audit log is appended at the daemon's next turn, src/daemon/audit.ts)
    const audited = (n: string) => readFileSync(rig.paths.auditLog, 'utf8').includes(`made protected path ${join(rig.ws, n)}: moved aside`);
    const unaudited = () => [...names, '.mcp.json'].filter((n) => !audited(n));
    await waitFor(() => unaudited().length === 0 || undefined, 'every move audited').catch(() => assert.deepEqual(unaudited(), [], 'audited'));
    // gate explain shows the list
    const ex = await run(GATE, ['explain', 'true'], { env: rig.env, cwd: rig.ws });
    for (const n of [...names, '.vscode', '.mcp.json', '.git/hooks', '.git/config']) assert.ok(ex.stdout.includes(n), `explain lists ${n}:\n${ex.stdout}`);
  } finally {
    await rig.close();
  }
});
