// Strict mode that does not nag (issue 17): under untrusted + workspace-write, `gate-sh -lc`, no approver,
// typical agent scripts run with no prompt, no start-up noise and bash's exact bytes; what a person must
// decide is still held. Real daemon, gate-sh, bash, bubblewrap and exec gate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { GATE, GATE_SH } from '../helpers/env.js';
import { execGateOptions } from '../exec-gate/helpers.js';
import { bash, run, type Ran } from '../shell/helpers.js';
import { request } from '../../src/transport/client.js';
import type { PreflightReply } from '../../src/protocol/messages.js';
import { AGENT_SCRIPTS, AGENT_SCRIPT_RULES as RULES, agentWorkspace } from '../helpers/agent-scripts.js';
import { auditLines, type DaemonProc, startDaemon } from '../helpers/daemon.js';

const CONFIG = 'approval_policy = "untrusted"\nsandbox_mode = "workspace-write"\n';
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  npm_config_update_notifier: 'false', npm_config_fund: 'false',
};

let home: string;
let rig: DaemonProc;
let wsGate: string;
let wsBash: string;
before(async () => {
  home = mkdtempSync('/var/tmp/gate-home-');
  // a login profile that runs programs, as /etc/profile and ~/.bashrc do
  writeFileSync(join(home, '.profile'), 'export FROM_PROFILE=yes\nuname -s > /dev/null\nif [ "$(id -u)" -ge 0 ]; then :; fi\n');
  rig = await startDaemon(execGateOptions({ rules: RULES, config: CONFIG, env: { HOME: home, GATE_APPROVAL_POLICY: 'untrusted', ...GIT_ENV } }));
  const template = join(rig.te.dir, 'template');
  agentWorkspace(template, rig.env);
  wsGate = join(rig.te.dir, 'g');
  wsBash = join(rig.te.dir, 'b');
  cpSync(template, wsGate, { recursive: true });
  cpSync(template, wsBash, { recursive: true });
});
after(async () => {
  await rig.close();
  rmSync(home, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ ...rig.env, GATE_NO_AUTOSTART: '1' });
const gateLc = (script: string, cwd = wsGate): Promise<Ran> => run(GATE_SH, ['-lc', script], { env: env(), cwd });
function audit(): Record<string, any>[] {
  return auditLines<Record<string, any>>(join(rig.env.GATE_HOME, 'audit.jsonl'));
}

test('33 typical agent scripts run under untrusted with -lc and no approver: no prompt, no start-up noise, bash\'s bytes', { timeout: 600_000 }, async () => {
  assert.equal(AGENT_SCRIPTS.length, 33);
  for (const script of AGENT_SCRIPTS) {
    const g = await gateLc(script, wsGate);
    const b = await bash(['-lc', script], { env: env(), cwd: wsBash });
    assert.equal(g.stderr.toString(), b.stderr.toString(), `stderr of ${JSON.stringify(script)}`);
    assert.equal(g.stdout.toString(), b.stdout.toString(), `stdout of ${JSON.stringify(script)}`);
    assert.equal(g.code, b.code, `status of ${JSON.stringify(script)}`);
  }
  // nobody was asked: nothing was denied for want of an approver
  assert.deepEqual(audit().filter((a) => a.decision === 'prompt'), []);
});

/** More kinds than the (while-read, case, subshell, brace group, arithmetic, process substitution,
 * parameter expansion, set -euo pipefail, unset, if/else, command -v, assignments, a here-string, PIPESTATUS). */
const MORE_KINDS = [
  'git status --short | while read -r st f; do echo "$st:$f"; done',
  'case "$(git rev-parse --abbrev-ref HEAD)" in main) echo on-main;; *) echo other;; esac',
  '( cd src && ls -1 )',
  '{ ls; echo done; } 2>&1 | tail -2',
  'echo $(( $(wc -l < README.md) * 2 ))',
  'cat <(ls src) <(echo more) | wc -l',
  'echo "${PWD##*/}" >/dev/null; echo "${HOME:+home-set}"',
  'ls src | head -1 | tr a-z A-Z',
  'set -euo pipefail; ls src; echo ok',
  'unset GREP_OPTIONS; grep -c o README.md',
  'if git diff --quiet; then echo clean; else echo dirty; fi',
  'command -v git >/dev/null && echo has-git',
  'N=3; head -n "$N" README.md | cat -n',
  'grep -c o <<< "$(cat README.md)"',
  'printf "%s\\n" a a b | uniq -c',
  'git log --format=%s -1 2>/dev/null | cut -c1-20; echo "exit=${PIPESTATUS[0]}"',
];

test('more kinds of harmless scripts run under untrusted with -lc and no approver, bash\'s bytes', { timeout: 600_000 }, async () => {
  const before = audit().length;
  for (const script of MORE_KINDS) {
    const g = await gateLc(script, wsGate);
    const b = await bash(['-lc', script], { env: env(), cwd: wsBash });
    assert.equal(g.stderr.toString(), b.stderr.toString(), `stderr of ${JSON.stringify(script)}`);
    assert.equal(g.stdout.toString(), b.stdout.toString(), `stdout of ${JSON.stringify(script)}`);
    assert.equal(g.code, b.code, `status of ${JSON.stringify(script)}`);
  }
  assert.deepEqual(audit().slice(before).filter((a) => a.decision === 'prompt'), []);
});

/** A held script: nothing of what a person must decide ran, and gate-sh said why. */
async function held(script: string, reason: RegExp): Promise<Ran> {
  const r = await gateLc(script);
  assert.match(r.stderr.toString(), reason, script);
  assert.ok(existsSync(join(wsGate, 'README.md')), `${script} deleted README.md`);
  return r;
}

test('still held under untrusted: rm through a loop, $(...), eval, xargs and a function', async () => {
  for (const script of [
    'for f in README.md; do rm "$f"; done',
    'echo $(rm README.md)',
    'eval "rm README.md"',
    'echo README.md | xargs rm',
    'f() { rm "$1"; }; f README.md',
  ])
    await held(script, /no approver is attached/);
});

test('writes: `> ~/.bashrc` and `git status > status.txt` ask for the write; sed -i and curl ask; find -delete asks before deleting', async () => {
  await held('echo evil > ~/.bashrc', /no approver is attached/);
  assert.ok(!existsSync(join(home, '.bashrc')));
  const w = await held('git status > status.txt', /approval needed for 'write .*\/status\.txt'.*`> status\.txt` at 1:12/);
  assert.doesNotMatch(w.stdout.toString(), /branch/, 'nothing ran');
  assert.ok(!existsSync(join(wsGate, 'status.txt')));
  await held('sed -i s/hello/bye/ README.md', /sed -i s\/hello\/bye\/ README\.md.*no approver/);
  assert.equal(readFileSync(join(wsGate, 'README.md'), 'utf8'), 'hello\nworld\nthird line\n');
  await held('curl -s http://127.0.0.1:9/', /curl -s http:\/\/127\.0\.0\.1:9\/.*no approver/);
  await held('find . -name "*.md" -delete', /find \. -name (?:'\*\.md'|\\\*\.md) -delete.*no approver/);
  await held('for d in .; do find "$d" -name "*.md" -delete; done', /find \. -name \*\.md -delete.*no approver/);
  assert.ok(existsSync(join(wsGate, 'src', 'a.md')));
});

test('a script decided per exec runs read-only: a write no redirection shows (history -w) fails in its sandbox', async () => {
  const script = 'for i in 1; do history -w hist.txt; done; echo "status $?"';
  const b = await bash(['-c', script], { env: env(), cwd: wsBash });
  assert.equal(b.stdout.toString(), 'status 0\n');
  const g = await run(GATE_SH, ['-c', script], { env: env(), cwd: wsGate });
  assert.equal(g.stdout.toString(), 'status 1\n');
  assert.ok(!existsSync(join(wsGate, 'hist.txt')));
  const reply = await request<PreflightReply>(rig.paths, {
    type: 'preflight',
    shell: 'bash',
    flag: '-c',
    script,
    cwd: wsGate,
    pid: process.pid,
    sandbox_permissions: 'use_default',
  });
  assert.equal(reply.per_exec, true);
  assert.deepEqual(reply.sandbox, { type: 'read-only' });
  // a plain script keeps the turn sandbox
  const plain = await request<PreflightReply>(rig.paths, {
    type: 'preflight',
    shell: 'bash',
    flag: '-c',
    script: 'ls',
    cwd: wsGate,
    pid: process.pid,
    sandbox_permissions: 'use_default',
  });
  assert.equal(plain.per_exec, undefined);
  assert.equal(plain.sandbox.type, 'workspace-write');
});

test('gate explain says where a script really runs: the same sandbox the daemon answers pre-flight with', async () => {
  for (const script of ['for f in *.md; do wc -l "$f"; done', 'ls src | head -1', 'ls', 'git status 2>&1']) {
    const ex = spawnSync(process.execPath, [GATE, 'explain', '--json', '--', 'bash', '-c', script], { env: env(), cwd: wsGate, encoding: 'utf8' });
    assert.equal(ex.status, 0, ex.stderr);
    const j = JSON.parse(ex.stdout);
    const reply = await request<PreflightReply>(rig.paths, { type: 'preflight', shell: 'bash', flag: '-c', script, cwd: wsGate, pid: process.pid, sandbox_permissions: 'use_default' });
    assert.equal(j.per_exec, reply.per_exec === true, script);
    assert.deepEqual(j.per_exec_sandbox ?? j.context.sandbox_policy, reply.sandbox, script);
    assert.equal(j.sandbox_narrowed, reply.sandbox_narrowed === true, script);
    if (j.per_exec) assert.deepEqual(j.subcommands[0].sandbox, reply.sandbox, script);
  }
});

test('a per-exec script whose write fails read-only but that exits 0 is offered the rerun: with no approver nothing runs twice and gate-sh says so', async () => {
  // a here-document over 64 KiB is a temporary file bash writes (/tmp is writable in the turn sandbox)
  const script = `cat <<EOF | wc -c\n${'x'.repeat(70_000)}\nEOF\necho "status $?"`;
  const b = await bash(['-c', script], { env: env(), cwd: wsBash });
  assert.equal(b.stdout.toString(), '70001\nstatus 0\n');
  const g = await run(GATE_SH, ['-c', script], { env: env(), cwd: wsGate });
  assert.equal(g.code, 0);
  assert.equal(g.stdout.toString(), '0\nstatus 0\n', 'ran once');
  assert.match(
    g.stderr.toString(),
    /^\S+: line 1: cannot create temp file for here-document: Read-only file system\ngate-sh: the sandboxed run failed \(read-only file system in the sandbox: .*cannot create temp file for here-document: Read-only file system\); not rerun: approval needed for 'bash -c [\s\S]*' but no approver is attached \(run 'gate approve'\)[^\n]*\n$/,
  );
  // not per exec (a plain script in the turn sandbox): a 0 stays a success, whatever its stderr says (as Codex)
  const plain = "ls 'x: Read-only file system'; true";
  const p = await run(GATE_SH, ['-c', plain], { env: env(), cwd: wsGate });
  const pb = await bash(['-c', plain], { env: env(), cwd: wsBash });
  assert.equal(p.code, 0);
  assert.equal(p.stderr.toString(), pb.stderr.toString());
  assert.match(p.stderr.toString(), /Read-only file system/);
});
