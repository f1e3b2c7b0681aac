/**
 * Every command README.md and the docs show works as a new user would try it (issue 32). The commands are
 * read from the markdown at test time (test/docs/doc-commands.ts); each one is either run here — in a
 * scratch HOME, GATE_HOME, CODEX_HOME and XDG_RUNTIME_DIR, in a scratch folder holding what the doc takes
 * for granted (a git repository with a package.json, script.sh, a Makefile, an ssh key), with the daemon
 * starting itself as the README says — and must end as the doc says (exit status, and the output the doc
 * shows where it shows one), or it is listed below with the reason it cannot run here. The list must be
 * complete: a new command in the docs fails this test until it is classified.
 *
 * Real gate-sh, gate, daemon, bubblewrap and bash; nothing is reached but this machine (no command run here
 * touches the network). Commands of one page run in page order in one scratch home, as a reader would.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GATE, ROOT, tempEnv, type TempEnv } from '../helpers/env.js';
import { killAll, track, waitFor } from '../helpers/daemon.js';
import { gatePaths } from '../../src/paths/paths.js';
import { docCommands, inOrder, type DocCommand } from './doc-commands.js';

after(killAll);

interface Run {
  /** exit status the doc promises (0 unless it says otherwise) */
  exit: number;
  stdout?: RegExp;
  stderr?: RegExp;
  /** the doc's shown lines (with /home/me as this HOME) appear in this stream, in order */
  shown?: 'stdout' | 'stderr';
  /** files (relative to the scratch folder) the command makes */
  makes?: string[];
  /** its stdout is bash's for the same command (`gate-sh` replaced by `bash`) */
  asBash?: boolean;
  /** a `gate approve --json` approving every prompt is attached while it runs (the doc has a person approve) */
  approver?: boolean;
  /** run this instead, and why (a part of the doc's command cannot run here) */
  instead?: { cmd: string; why: string };
  /** a program the command runs that the test prerequisites do not include: without it, skipped and said */
  needs?: string;
}
type Entry = Run | { skip: string };

const SYNOPSIS = 'a synopsis: the words in brackets and capitals are placeholders, not a command to run';
const CONSOLE = 'a console that waits for prompts until it is ended (its --json form approves in this test and in test/helpers/daemon.ts)';
const AGENT = 'starts a real agent CLI, not installed here (npm run test:agents runs them against scripted model servers)';
const TERMINAL = 'an interactive shell on a terminal (test/pty/ runs it in a PTY)';

/** Page → command as the doc writes it → what it must do here. */
const COMMANDS: Record<string, Record<string, Entry>> = {
  'README.md': {
    "npm install && ./bin/gate-sh -lc 'echo hello from gate-sh && ls'": {
      instead: { cmd: "./bin/gate-sh -lc 'echo hello from gate-sh && ls'", why: 'npm install: this checkout is installed and built already (a rebuild would change the tree the tests run from)' },
      exit: 0,
      stdout: /^hello from gate-sh\n(.*\n)*bin\n/,
    },
    'npm test': { skip: 'the whole test suite, of which this test is a part' },
    'npm pack': { skip: 'packs this checkout: test/scripts/pack-install.test.ts packs it and installs the tarball' },
    'npm install -g --allow-scripts=gate-sh,node-pty,unix-dgram ./gate-sh-0.1.0.tgz': {
      skip: 'a global install (dependencies from the registry): test/scripts/pack-install.test.ts installs into a scratch prefix from a loopback registry',
    },
    "gate-sh -lc 'echo ok' && gate --version && gate-sh --help": { exit: 0, stdout: /^ok\ngate \(gate-sh\) \d+\.\d+\.\d+\ngate-sh \d+\.\d+\.\d+ .*\n(.*\n)*Usage:/ },
    // shown three times: set up, then "safe to run twice", then set up again after the undo
    './bin/gate setup claude-code': { exit: 0, stdout: /CLAUDE_CODE_SHELL|^nothing to change: already set up$/m },
    "echo 'git status && npm test' | ./bin/gate-sh": { exit: 0, stdout: /^On branch (.*\n)*tests pass\n$/ },
    './bin/gate-sh ./script.sh arg1': { exit: 0, stdout: /^script got arg1\n$/ },
    './bin/gate-sh': { skip: TERMINAL },
    './bin/gate approve': { skip: CONSOLE },
    // the README: "A prompt with no approver attached is denied at once and says how to attach one"
    "./bin/gate-sh --escalate --justification 'publish the site' -c 'cp -r dist /srv/www'": {
      exit: 126,
      stderr: /^gate-sh: approval needed for 'cp -r dist \/srv\/www' but no approver is attached \(run 'gate approve'\)/,
    },
    "mkdir -p out && ./bin/gate-sh --with-permissions '{\"file_system\":{\"write\":[\"./out\"]}}' -c 'make out'": {
      approver: true,
      exit: 0,
      makes: ['out/result'],
    },
    './bin/gate doctor': { exit: 0, stdout: /^Claude Code .*: gated by gate-sh/m },
    './bin/gate setup --undo claude-code': { exit: 0, stdout: /^removed /m },
    'claude --allowedTools Bash': { skip: AGENT },
    './bin/gate setup claude-code --route hook': { exit: 0, stdout: /hooks\.PreToolUse \(matcher Bash\) runs 'gate hook claude-code'/ },
    './bin/gate setup codex': { exit: 0, stdout: /\[mcp_servers\.gate\] runs gate mcp/ },
    codex: { skip: AGENT },
    './bin/gate setup gemini': { exit: 0, stdout: /hooks\.BeforeTool \(matcher run_shell_command\) runs 'gate hook gemini'/ },
    'PATH=~/.gate-sh/bin:$PATH gemini': { skip: AGENT },
  },
  'docs/daemon.md': {
    'gate daemon start': { exit: 0, stdout: /^gate daemon started \(pid \d+, session 'default'\)$/m },
    'gate daemon run': { skip: 'the daemon in the foreground until it is stopped: every test daemon is this command (test/helpers/daemon.ts)' },
    'gate daemon stop': { exit: 0, stdout: /^gate daemon stopped \(pid \d+\)$/m },
    'gate status [--json]': { skip: SYNOPSIS },
    'gate approve': { skip: CONSOLE },
    'gate approve --json [--name N]': { skip: SYNOPSIS },
    'gate approve --answer ID DECISION': { skip: SYNOPSIS },
    'gate log [--follow] [--json] [--run ID] [--decision allow|prompt|forbidden|Run|Deny|Escalate] [--since 10m|ISO] [-n N]': { skip: SYNOPSIS },
  },
  'docs/explain.md': {
    "gate explain [options] -- bash -lc '<script>'": { skip: SYNOPSIS },
    "gate explain [options] '<script>'": { skip: SYNOPSIS },
    'gate explain [options] -- <program> [args...]': { skip: SYNOPSIS },
    "gate explain [options] -- gate-sh -c '<script>'": { skip: SYNOPSIS },
    "gate explain --rules my.rules -- bash -lc 'git status && LD_PRELOAD=x make && env rm -rf y'": { exit: 0, shown: 'stdout' },
  },
  'docs/interactive.md': {
    'gate-sh': { skip: TERMINAL },
  },
  'docs/network-decisions.md': {
    'gate log --kind network --decision deny': { exit: 0, stdout: /^$/ },
    'gate log --kind network --run r-8f2a…': { exit: 0, stdout: /^$/ },
  },
  'docs/network.md': {
    'curl -sS -D - http://example.org/': {
      skip: 'a connection to a host on the internet (tests reach loopback only); test/network/ runs the proxy that answers it',
    },
  },
  'docs/rules.md': {
    'gate init': { exit: 0, stdout: /config\.toml/ },
    'gate policy files': { exit: 0 },
    'gate policy check -- git push --force': { exit: 0, stdout: /^\{"matchedRules":\[\]\}\n$/ },
    'gate policy amend -- npm test': { exit: 0, stdout: /^appended: prefix_rule\(pattern=\["npm", "test"\], decision="allow"\)/ },
    "gate rules add --forbid rm -rf --justification 'use trash'": { exit: 0, stdout: /^added: forbidden rm -rf/ },
    'gate rules list': { exit: 0, stdout: /:\d+ +allow +\["npm", "test"\]\n(.*\n)*.*:\d+ +forbidden +\["rm", "-rf"\] +use trash\n/ },
    'gate policy check --rules FILE [--rules FILE2 ...] [--pretty] [--resolve-host-executables] [--hardened] -- COMMAND...': { skip: SYNOPSIS },
  },
  'docs/secrets.md': {
    "gate-sh -c 'cat ~/.ssh/id_rsa'": { exit: 1, shown: 'stderr' },
    'gate-sh --with-permissions \'{"file_system":{"read":["/","~/.ssh"]}}\' -c \'cat ~/.ssh/id_rsa\'': {
      approver: true,
      exit: 0,
      stdout: /^-----BEGIN OPENSSH PRIVATE KEY-----\n/,
    },
    "gate explain 'true'": { exit: 0, stdout: /^hidden secrets .*: (?=.* HOME\/\.ssh\b)(?=.* HOME\/\.aws\b)(?=.* HOME\/\.npmrc\b)/m },
    'gate-sh --with-permissions \'{"file_system":{"read":["/","~/.ssh"]}}\' -c \'ssh-keygen -y -f ~/.ssh/id_rsa\'': {
      approver: true,
      needs: 'ssh-keygen',
      exit: 0,
      stdout: /^ssh-ed25519 AAAA/,
    },
    'gate-sh --with-permissions \'{"file_system":{"write":["~/.aws"]}}\' -c \'aws configure set region eu-west-1\'': {
      skip: 'the aws CLI is not installed here; a write grant of a hidden location is run in test/sandbox/secrets.test.ts',
    },
  },
  'docs/shell.md': {
    "gate-sh -lc 'git status && npm test'": { exit: 0, stdout: /^On branch (.*\n)*tests pass\n$/ },
    'SHELL=$(command -v gate-sh) some-agent': { skip: '`some-agent` stands for any agent (README "With an agent": gate setup wires the real ones)' },
    "echo 'git status && npm test' | gate-sh": { exit: 0, stdout: /^On branch (.*\n)*tests pass\n$/ },
    'gate-sh ./build.sh release': { exit: 0, stdout: /^building release\n$/ },
    'gate-sh -c \'echo "$0 $1"\' name one': { exit: 0, asBash: true, stdout: /^name one\n$/ },
  },
};

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const found = PAGES.flatMap((p) => docCommands(p, readFileSync(join(ROOT, p), 'utf8')));

test('every command the docs show is run by this test or listed with why it cannot run here', () => {
  const unlisted = found.filter((c) => COMMANDS[c.file]?.[c.cmd] === undefined).map((c) => `${c.file}:${c.line}: ${c.cmd}`);
  assert.deepEqual(unlisted, [], 'classify each new command in COMMANDS (run it, with what the doc says it does, or skip it with the reason)');
  const stale = Object.entries(COMMANDS).flatMap(([file, cmds]) =>
    Object.keys(cmds)
      .filter((cmd) => !found.some((c) => c.file === file && c.cmd === cmd))
      .map((cmd) => `${file}: ${cmd}`),
  );
  assert.deepEqual(stale, [], 'these listed commands are no longer in the docs');
  // a check against the doc's shown output needs the doc to show some
  for (const c of found) {
    const e = COMMANDS[c.file]?.[c.cmd];
    if (e && 'shown' in e && e.shown) assert.ok(c.shown.length > 0, `${c.file}:${c.line}: the doc shows no output to compare`);
  }
  assert.ok(found.length >= 50, `only ${found.length} commands found: is the extraction broken?`);
});

/** The scratch folder a reader works in: what the docs take for granted. */
function scratch(te: TempEnv): string {
  const ws = join(te.dir, 'ws');
  mkdirSync(ws);
  symlinkSync(join(ROOT, 'bin'), join(ws, 'bin')); // ./bin/gate-sh as in a clone
  const git = spawnSync('git', ['init', '-q', ws]);
  assert.equal(git.status, 0, git.stderr?.toString());
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'demo', version: '1.0.0', scripts: { test: 'echo tests pass' } }));
  writeFileSync(join(ws, 'script.sh'), 'echo "script got $1"\n');
  writeFileSync(join(ws, 'build.sh'), 'echo "building $1"\n');
  writeFileSync(join(ws, 'Makefile'), '.PHONY: out\nout:\n\techo built > out/result\n');
  writeFileSync(join(ws, 'my.rules'), 'prefix_rule(pattern=["git", "status"], decision="allow")\nprefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")\n');
  const home = te.env.HOME;
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const keyFile = join(home, '.ssh', 'id_rsa');
  if (onPath('ssh-keygen')) {
    const key = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    assert.equal(key.status, 0, `ssh-keygen: ${key.stderr?.toString()}`);
  } else writeFileSync(keyFile, '-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key: ssh-keygen is not installed\n-----END OPENSSH PRIVATE KEY-----\n', { mode: 0o600 });
  mkdirSync(join(home, '.aws'));
  writeFileSync(join(home, '.aws', 'credentials'), '[default]\n');
  writeFileSync(join(home, '.npmrc'), '//registry.npmjs.org/:_authToken=npm_secret\n');
  return ws;
}

function onPath(program: string): boolean {
  return spawnSync('bash', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

/** `gate approve --json` answering every prompt 'approved', attached before the command runs. */
async function approver(env: Record<string, string>): Promise<ChildProcess> {
  const a = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'docs-reader'], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  let attached = false;
  createInterface({ input: a.stdout! }).on('line', (l) => {
    const e = JSON.parse(l);
    if (e.type === 'attached') attached = true;
    if (e.type === 'prompt') a.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: 'approved' }) + '\n');
  });
  await waitFor(() => attached, 'the approver to attach', 30_000);
  return a;
}

function run(cmd: string, env: Record<string, string>, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = track(spawn('bash', ['-c', cmd], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (d) => (stdout += d));
    c.stderr!.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The daemon the commands started, stopped and gone (by its pid file, never by name). */
async function stopDaemon(env: Record<string, string>): Promise<void> {
  spawnSync(process.execPath, [GATE, 'daemon', 'stop', '--force'], { env, stdio: 'ignore' });
  const pidFile = gatePaths(env).pidFile;
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (pid > 0)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
}

async function check(c: DocCommand, e: Run, env: Record<string, string>, ws: string): Promise<void> {
  const where = `${c.file}:${c.line}: ${c.cmd}`;
  const a = e.approver ? await approver(env) : undefined;
  let r: Awaited<ReturnType<typeof run>>;
  try {
    r = await run(e.instead?.cmd ?? c.cmd, env, ws);
  } finally {
    a?.kill('SIGTERM');
  }
  const out = `\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  assert.equal(r.code, e.exit, `${where}: exit status${out}`);
  if (e.stdout) assert.match(r.stdout.replaceAll(env.HOME, 'HOME'), e.stdout, `${where}: stdout${out}`);
  if (e.stderr) assert.match(r.stderr, e.stderr, `${where}: stderr${out}`);
  if (e.shown) {
    const want = c.shown.map((l) => l.replaceAll('/home/me', env.HOME));
    const got = inOrder(want, (e.shown === 'stdout' ? r.stdout : r.stderr).split('\n'));
    assert.ok(got.ok, `${where}: the doc shows a line the command does not print: ${got.ok ? '' : got.missing}${out}`);
  }
  for (const f of e.makes ?? []) assert.ok(existsSync(join(ws, f)), `${where}: ${f} was not made${out}`);
  if (e.asBash) {
    const bash = await run(c.cmd.replace(/^gate-sh\b/, 'bash'), env, ws);
    assert.equal(r.stdout, bash.stdout, `${where}: stdout differs from bash's`);
  }
}

for (const page of PAGES) {
  const commands = found.filter((c) => c.file === page);
  const entry = (c: DocCommand): Entry => COMMANDS[page]?.[c.cmd] ?? { skip: 'not classified (the first test fails on it)' };
  if (!commands.some((c) => !('skip' in entry(c)))) continue;
  test(`${page}: its commands end as it says`, { timeout: 300_000 }, async (t) => {
    // a fresh home per page, with nothing of gate-sh in it: the daemon starts itself at the first command
    const te = tempEnv({ PATH: `${join(ROOT, 'bin')}:${process.env.PATH}` });
    delete te.env.GATE_NO_AUTOSTART;
    delete te.env.GATE_SESSION;
    try {
      const ws = scratch(te);
      for (const c of commands) {
        const e = entry(c);
        if ('skip' in e) continue;
        if (e.needs && !onPath(e.needs)) {
          t.diagnostic(`${c.file}:${c.line}: not run: ${e.needs} is not installed`);
          continue;
        }
        await check(c, e, te.env, ws);
      }
    } finally {
      await stopDaemon(te.env);
      te.cleanup();
    }
  });
}
