// Secrets are not the sandbox's to read (issue 33, docs/secrets.md), end to end: a real daemon, the real
// gate-sh (native, and the Node entry for the config case), bubblewrap, and a scratch HOME this test makes
// (tempEnv's; never the user's own). Credential files made there before the runs must not be readable
// inside the turn sandbox — workspace-write joining its session sandbox, workspace-write with a sandbox of
// its own, read-only — by name, through a symlink, by listing, `find`, `grep` or the session holder's
// /proc/1/root, nor in a skill's sandbox (the escalation runner's); the same command outside any
// sandbox (danger-full-access) reads them; a `--with-permissions` read or write grant opens exactly the
// location it names, for that run, and its prompt says so; `[secrets]` in config.toml adds and takes away;
// a location that does not exist leaves no trace in HOME. A hard link to a secret made before the run is
// the known limit (it is the same file under another name): pinned below as it behaves. Test-only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH, GATE_SH_NODE } from '../helpers/env.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';

const KEY = 'PRIVATE-KEY-of-the-test';
const AWS = 'AWS-SECRET-of-the-test';
const NETRC = 'machine example password NETRC-SECRET';
const NOTES = 'NOTES-of-the-test';

/** The secrets of a scratch HOME, and a workspace with a symlink and a hard link to the key. */
function plant(home: string, ws: string): void {
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh', 'id_rsa'), KEY, { mode: 0o600 });
  mkdirSync(join(home, '.aws'));
  writeFileSync(join(home, '.aws', 'credentials'), AWS);
  writeFileSync(join(home, '.netrc'), NETRC);
  writeFileSync(join(home, 'notes.txt'), NOTES);
  symlinkSync(join(home, '.ssh', 'id_rsa'), join(ws, 'key-link'));
  linkSync(join(home, '.ssh', 'id_rsa'), join(ws, 'key-hardlink'));
}

// Each probe prints a marker and what it saw; nothing of a secret may appear in any output but the marker's.
const PROBE = [
  'echo "[ssh]"; cat ~/.ssh/id_rsa',
  'echo "[aws]"; cat ~/.aws/credentials',
  'echo "[netrc]"; cat ~/.netrc; wc -c < ~/.netrc',
  'echo "[ls]"; ls -A ~/.ssh',
  'echo "[link]"; cat key-link',
  'echo "[find]"; find ~ -name id_rsa',
  'echo "[grep]"; grep -rl PRIVATE-KEY ~ 2>/dev/null',
  // pid 1 of a session sandbox is its holder, whose root is the host's: its /proc files are closed to the run
  'echo "[proc1]"; cat "/proc/1/root$HOME/.ssh/id_rsa" 2>/dev/null',
  'echo "[hard]"; cat key-hardlink',
  'echo "[end]"',
].join('; ');

/** The output between a marker and the next (a run that failed to start says why: its stderr). */
function section(r: { stdout: string; stderr: string }, name: string): string {
  const m = new RegExp(`\\[${name}\\]\\n([\\s\\S]*?)\\[`).exec(r.stdout);
  assert.ok(m, `section ${name} in ${JSON.stringify(r.stdout)}; stderr: ${r.stderr}`);
  return m[1];
}

let rig: DaemonProc;
let home: string;
let plainSkill: string;
let readerSkill: string;
before(async () => {
  rig = await startDaemon({
    config: 'approval_policy = "on-request"\nsandbox_mode = "workspace-write"\n',
    env: { GATE_NO_AUTOSTART: '1' },
    workspace: 'w',
    autoApprove: true,
  });
  home = rig.env.HOME;
  plant(home, rig.ws);
  // before the first run: a session sandbox keeps the view of CODEX_HOME it was built with (blocked while missing)
  plainSkill = skill('writer', '  file_system:\n    write: [out]');
  readerSkill = skill('ssh-reader', "  file_system:\n    read: ['/', '~/.ssh']");
});
after(() => rig?.close());

async function sandboxMode(mode: string): Promise<void> {
  const r = await run(process.execPath, [GATE, 'config', 'set', 'sandbox_mode', mode], { env: rig.env });
  assert.equal(r.code, 0, r.stderr);
}

/** The home's entries, and the home of every hidden folder: a run must leave none made. */
function homeEntries(): string[] {
  return readdirSync(home).sort();
}

for (const [name, mode, env] of [
  ['workspace-write, joining the session sandbox', 'workspace-write', {}],
  ['workspace-write, a sandbox of its own', 'workspace-write', { GATE_SESSION_SANDBOX: 'off' }],
  ['read-only, joining the session sandbox', 'read-only', {}],
  ['read-only, a sandbox of its own', 'read-only', { GATE_SESSION_SANDBOX: 'off' }],
] as [string, string, Record<string, string>][]) {
  test(`${name}: the credential files are empty or absent by name, link, listing, find and grep`, async () => {
    await sandboxMode(mode);
    const before = homeEntries();
    const r = await run(GATE_SH, ['-c', PROBE], { env: { ...rig.env, ...env }, cwd: rig.ws });
    const out = r.stdout;
    assert.equal(section(r, 'ssh'), '', r.stderr);
    assert.match(r.stderr, /cat: .*\.ssh\/id_rsa: No such file or directory/);
    assert.equal(section(r, 'aws'), '');
    // a hidden file is there, empty: tools that read it find nothing configured
    assert.equal(section(r, 'netrc'), '0\n');
    assert.equal(section(r, 'ls'), '');
    assert.equal(section(r, 'link'), '');
    assert.equal(section(r, 'find'), '', 'find ~ finds no id_rsa');
    assert.equal(section(r, 'grep'), '', 'no file under ~ holds the key');
    assert.equal(section(r, 'proc1'), '', 'not through /proc/1/root either');
    for (const s of [AWS, 'NETRC-SECRET']) assert.ok(!out.includes(s) && !r.stderr.includes(s), `${s} leaked: ${out}`);
    // the known limit: a hard link made before the run is the same file under another name (docs/secrets.md)
    assert.equal(section(r, 'hard'), KEY);
    assert.deepEqual(homeEntries(), before, 'nothing made in HOME');
  });
}

test('outside any sandbox (danger-full-access) the same command reads them: nothing is hidden there', async () => {
  await sandboxMode('danger-full-access');
  try {
    const r = await run(GATE_SH, ['-c', PROBE], { env: rig.env, cwd: rig.ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(section(r, 'ssh'), KEY);
    assert.equal(section(r, 'aws'), AWS);
    assert.equal(section(r, 'link'), KEY);
    assert.equal(section(r, 'find'), `${join(home, '.ssh', 'id_rsa')}\n`);
  } finally {
    await sandboxMode('workspace-write');
  }
});

test("the issue's command: `cat ~/.ssh/id_rsa` fails in the sandbox and works after a read grant of ~/.ssh", async () => {
  await sandboxMode('workspace-write');
  const denied = await run(GATE_SH, ['-c', 'cat ~/.ssh/id_rsa'], { env: rig.env, cwd: rig.ws });
  assert.notEqual(denied.code, 0);
  assert.equal(denied.stdout, '');
  const prompts = rig.prompts.length;
  const r = await run(GATE_SH, ['--with-permissions', '{"file_system":{"read":["~/.ssh"]}}', '-c', 'cat ~/.ssh/id_rsa'], { env: rig.env, cwd: rig.ws });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, KEY);
  const asked = rig.prompts.slice(prompts).find((p) => p.sandbox_permissions === 'with_additional_permissions');
  assert.deepEqual(asked?.secret_access, [{ location: join(home, '.ssh'), path: join(home, '.ssh'), access: 'read' }]);
});

test('a read grant opens exactly the location it names, for that run, and its prompt says so', async () => {
  await sandboxMode('workspace-write');
  const prompts = rig.prompts.length;
  const profile = JSON.stringify({ file_system: { read: ['/', '~/.ssh'] } });
  const r = await run(GATE_SH, ['--with-permissions', profile, '-c', 'cat ~/.ssh/id_rsa; echo; ls -A ~/.ssh; cat ~/.aws/credentials; wc -c < ~/.netrc'], {
    env: rig.env,
    cwd: rig.ws,
  });
  assert.equal(r.stdout, `${KEY}\nid_rsa\n0\n`, r.stderr);
  assert.match(r.stderr, /\.aws\/credentials: No such file or directory/);
  const asked = rig.prompts.slice(prompts).find((p) => p.sandbox_permissions === 'with_additional_permissions');
  assert.ok(asked, 'the grant was asked');
  assert.deepEqual(asked.secret_access, [{ location: join(home, '.ssh'), path: join(home, '.ssh'), access: 'read' }]);
  // the next run without a grant: hidden again
  const again = await run(GATE_SH, ['-c', 'cat ~/.ssh/id_rsa'], { env: rig.env, cwd: rig.ws });
  assert.notEqual(again.code, 0);
  assert.equal(again.stdout, '');
  // and a grant of the whole home names no secret location: nothing of them opens
  const wide = await run(GATE_SH, ['--with-permissions', JSON.stringify({ file_system: { read: ['~'] } }), '-c', 'cat ~/.ssh/id_rsa; cat ~/notes.txt'], {
    env: rig.env,
    cwd: rig.ws,
  });
  assert.equal(wide.stdout, NOTES, wide.stderr);
});

test('a write grant to a secret location makes it writable in that run only, and is shown as a write', async () => {
  const prompts = rig.prompts.length;
  const r = await run(GATE_SH, ['--with-permissions', JSON.stringify({ file_system: { write: ['~/.aws'] } }), '-c', 'cat ~/.aws/credentials; echo -n +more >> ~/.aws/credentials'], {
    env: rig.env,
    cwd: rig.ws,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, AWS);
  assert.equal(readFileSync(join(home, '.aws', 'credentials'), 'utf8'), `${AWS}+more`);
  writeFileSync(join(home, '.aws', 'credentials'), AWS);
  const asked = rig.prompts.slice(prompts).find((p) => p.sandbox_permissions === 'with_additional_permissions');
  assert.deepEqual(asked?.secret_access, [{ location: join(home, '.aws'), path: join(home, '.aws'), access: 'write' }]);
  const after = await run(GATE_SH, ['-c', 'cat ~/.aws/credentials'], { env: rig.env, cwd: rig.ws });
  assert.equal(after.stdout, '', 'hidden again in the next run');
});

/** A skill under CODEX_HOME/skills whose script prints the key, or `hidden`. */
function skill(name: string, permissions: string): string {
  const dir = join(rig.env.CODEX_HOME, 'skills', name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'out'), { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: reads a key\npermissions:\n${permissions}\n---\n# ${name}\n`);
  writeFileSync(join(dir, 'scripts', 'run.sh'), '#!/bin/bash\ncat ~/.ssh/id_rsa 2>/dev/null || echo hidden\n');
  chmodSync(join(dir, 'scripts', 'run.sh'), 0o755);
  return join(dir, 'scripts', 'run.sh');
}

test("a skill's sandbox (its declared permissions, run by the escalation runner) hides them too, unless it declares one", async () => {
  await sandboxMode('workspace-write');
  const r = await run(GATE_SH, ['-c', plainSkill], { env: rig.env, cwd: rig.ws });
  assert.equal(r.stdout, 'hidden\n', r.stderr);
  const prompts = rig.prompts.length;
  const k = await run(GATE_SH, ['-c', readerSkill], { env: rig.env, cwd: rig.ws });
  assert.equal(k.stdout, KEY, k.stderr);
  const asked = rig.prompts.slice(prompts).find((p) => p.command?.[0] === readerSkill);
  assert.deepEqual(asked?.secret_access, [{ location: join(home, '.ssh'), path: join(home, '.ssh'), access: 'read' }]);
});

test('[secrets] in config.toml: hide adds a location, show takes one away (native and Node gate-sh)', async (t) => {
  const d = await startDaemon({
    config: 'approval_policy = "on-request"\nsandbox_mode = "workspace-write"\n[secrets]\nhide = ["~/notes.txt"]\nshow = ["~/.netrc"]\n',
    env: { GATE_NO_AUTOSTART: '1' },
    workspace: 'w',
  });
  t.after(() => d.close());
  const h = d.env.HOME;
  plant(h, d.ws);
  for (const sh of [GATE_SH, GATE_SH_NODE]) {
    const r = await run(sh, ['-c', 'cat ~/notes.txt; echo "|"; cat ~/.netrc; echo "|"; cat ~/.ssh/id_rsa; echo "|"'], { env: d.env, cwd: d.ws });
    assert.equal(r.stdout, `|\n${NETRC}|\n|\n`, `${sh}: ${r.stderr}`);
  }
  // gate explain lists what applies
  const e = await run(process.execPath, [GATE, 'explain', 'true'], { env: d.env, cwd: d.ws });
  assert.equal(e.code, 0, e.stderr);
  const line = e.stdout.split('\n').find((l) => l.startsWith('hidden secrets'));
  assert.ok(line?.includes(join(h, 'notes.txt')) && line.includes(join(h, '.ssh')) && !line.includes('.netrc'), line);
});

test('a location that does not exist leaves no trace: no mount point is made in HOME, inside or out', async () => {
  await sandboxMode('workspace-write');
  const r = await run(GATE_SH, ['-c', 'ls -A ~'], { env: rig.env, cwd: rig.ws });
  assert.equal(r.code, 0, r.stderr);
  // inside, the home lists exactly what is there outside (no .gnupg, .kube, .docker made for a mask)
  assert.deepEqual(r.stdout.split('\n').filter(Boolean).sort(), homeEntries());
  for (const p of ['.gnupg', '.kube', '.docker', '.config', '.codex', '.gemini', '.claude.json']) assert.ok(!existsSync(join(home, p)), p);
});
