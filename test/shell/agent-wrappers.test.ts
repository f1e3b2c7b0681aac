/**
 * The real agents' command wrappers through gate-sh with a real daemon and real bash (issue 14, points 2-3):
 * Claude Code's `source <snapshot> ... && eval '<cmd>' < /dev/null && pwd -P >| <cwd file>`, gemini-cli's
 * `( trap 'jobs -p > "$_bgpids_file"' EXIT; <cmd> )`, Codex's `bash -lc` with PAGER=cat and friends.
 * An allowed command runs with no prompt and the same bytes as bash; a forbidden one is denied by its own
 * rule, with the rule's justification and file:line on stderr, at pre-flight and at exec time.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { gatePaths } from '../../src/paths/paths.js';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { bash, gateSh, type Ran } from './helpers.js';
import { daemonForTest } from '../helpers/daemon.js';

const RULES_FORBID =
  'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")\nprefix_rule(pattern=["git", "status"], decision="allow")\n';
const RULES_ALLOW = 'prefix_rule(pattern=["rm"], decision="allow")\nprefix_rule(pattern=["git", "status"], decision="allow")\n';

/** A shell snapshot in Claude Code 2.1.197's bash format, made by real bash from the functions and aliases given. */
const SNAPSHOT_MAKER = String.raw`
SNAPSHOT_FILE=$1
echo "# Snapshot file" >| "$SNAPSHOT_FILE"
echo "# Unset all aliases to avoid conflicts with functions" >> "$SNAPSHOT_FILE"
echo "unalias -a 2>/dev/null || true" >> "$SNAPSHOT_FILE"
echo "# Functions" >> "$SNAPSHOT_FILE"
declare -F | cut -d' ' -f3 | grep -vE '^_[^_]' | while read func; do
  encoded_func=$(declare -f "$func" | base64 )
  echo "eval \"\$(echo '$encoded_func' | base64 -d)\" > /dev/null 2>&1" >> "$SNAPSHOT_FILE"
done
echo "# Shell Options" >> "$SNAPSHOT_FILE"
shopt -p | head -n 1000 >> "$SNAPSHOT_FILE"
set -o | grep "on" | awk '{print "set -o " $1}' | head -n 1000 >> "$SNAPSHOT_FILE"
echo "shopt -s expand_aliases" >> "$SNAPSHOT_FILE"
echo "# Aliases" >> "$SNAPSHOT_FILE"
alias | sed 's/^alias //g' | sed 's/^/alias -- /' | head -n 1000 >> "$SNAPSHOT_FILE"
echo "# Check for rg availability" >> "$SNAPSHOT_FILE"
echo "if ! (unalias rg 2>/dev/null; command -v rg) >/dev/null 2>&1; then" >> "$SNAPSHOT_FILE"
echo "  alias rg='/usr/bin/rg'" >> "$SNAPSHOT_FILE"
echo "fi" >> "$SNAPSHOT_FILE"
echo "export PATH='$PATH'" >> "$SNAPSHOT_FILE"
`;

/** The user's shell: functions (one hides an rm: defining it is no command) and aliases. */
const USER_SHELL = `cleanup() { rm -rf somefile; }\ngs() { git status "$@"; }\nalias ll='ls -l'\n`;

/** Claude Code's Bash tool command (buildExecCommand: snapshot, extglob off, eval of the quoted command, cwd file). */
function claude(snapshot: string, cmd: string, cwdFile: string): string {
  const quoted = `'${cmd.replaceAll("'", `'"'"'`)}'`;
  return `source ${snapshot} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval ${quoted} < /dev/null && pwd -P >| ${cwdFile}`;
}

/** gemini-cli's shell tool command (wrapCommandForBackgroundPIDs). */
function gemini(cmd: string, pidsFile: string): string {
  return `_bgpids_file=${pidsFile}\n(\n  trap 'jobs -p > "$_bgpids_file"' EXIT\n${cmd}\n)\n__code=$?\nexit $__code`;
}

/** What Codex exports to every command it runs. */
const CODEX_ENV = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', GH_PAGER: 'cat', CODEX_CI: '1' };

interface Rig {
  env: Record<string, string>;
  ws: string;
  snapshot: string;
  dir: string;
}

/** A real daemon (default config plus `config`, started with `daemonEnv` added), a git workspace, a snapshot. */
async function rig(t: TestContext, rules: string, config = '', daemonEnv: Record<string, string> = {}): Promise<Rig> {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  const env = { ...te.env };
  const d = await daemonForTest(t, { te: { ...te, env: { ...te.env, ...daemonEnv } }, rules, config, workspace: 'ws' });
  const ws = d.ws;
  execFileSync('git', ['init', '-q', ws]);
  writeFileSync(join(ws, 'somefile'), 'x\n');
  const snapshot = join(te.dir, 'snapshot-bash-1764000000000-abc123.sh');
  execFileSync('/bin/bash', ['-c', `${USER_SHELL}\n${SNAPSHOT_MAKER}`, 'snap', snapshot], { env });
  return { env, ws, snapshot, dir: te.dir };
}

function same(g: Ran, b: Ran, what: string): void {
  assert.equal(g.stderr.toString(), b.stderr.toString(), `${what}: stderr`);
  assert.equal(g.stdout.toString(), b.stdout.toString(), `${what}: stdout`);
  assert.deepEqual(g.stdout, b.stdout, `${what}: stdout bytes`);
  assert.equal(g.code, b.code, `${what}: status`);
}

for (const policy of ['on-request', 'never']) {
  test(`Claude Code's wrapper, ${policy}: an allowed command runs with no prompt, output byte-exact with bash`, async (t) => {
    const r = await rig(t, RULES_FORBID, `approval_policy = "${policy}"\n`);
    const cwdFile = join(r.dir, 'claude-1a2b-cwd');
    const script = claude(r.snapshot, 'git status && echo ok', cwdFile);
    const g = await gateSh(['-c', script], { env: r.env, cwd: r.ws });
    assert.equal(readFileSync(cwdFile, 'utf8'), `${r.ws}\n`, 'the cwd file is an ordinary sandboxed write');
    const b = await bash(['-c', script], { env: r.env, cwd: r.ws });
    same(g, b, script);
    assert.match(g.stdout.toString(), /No commits yet[\s\S]*\nok\n$/);
    // a function and an alias from the snapshot
    for (const cmd of ['gs --short', 'll -d .']) {
      const s = claude(r.snapshot, cmd, cwdFile);
      same(await gateSh(['-c', s], { env: r.env, cwd: r.ws }), await bash(['-c', s], { env: r.env, cwd: r.ws }), cmd);
    }
  });

  test(`gemini-cli's wrapper, ${policy}: an allowed command runs with no prompt, output byte-exact with bash`, async (t) => {
    const r = await rig(t, RULES_FORBID, `approval_policy = "${policy}"\n`);
    const pids = join(r.dir, 'bgpids.tmp');
    const script = gemini('git status --short && echo ok', pids);
    const g = await gateSh(['-c', script], { env: r.env, cwd: r.ws });
    assert.ok(existsSync(pids), 'the trap wrote its pid file');
    same(g, await bash(['-c', script], { env: r.env, cwd: r.ws }), script);
    assert.equal(g.stdout.toString(), '?? somefile\nok\n');
  });
}

test("Claude Code's wrapper: a forbidden command is denied by its rule at pre-flight, with the justification and file:line", async (t) => {
  const r = await rig(t, RULES_FORBID);
  const cwdFile = join(r.dir, 'claude-3c4d-cwd');
  const rules = join(r.env.GATE_HOME, 'rules', 'default.rules');
  for (const cmd of ['rm -rf somefile', 'f() { rm -rf somefile; }; f', 'for x in somefile; do rm -rf "$x"; done']) {
    const g = await gateSh(['-c', claude(r.snapshot, cmd, cwdFile)], { env: r.env, cwd: r.ws });
    assert.equal(g.code, 126, cmd);
    assert.equal(g.stdout.length, 0, `${cmd}: nothing ran`);
    assert.ok(g.stderr.toString().includes(`rejected: use trash instead (rule ${rules}:1)`), `${cmd}: ${g.stderr}`);
    assert.ok(existsSync(join(r.ws, 'somefile')), cmd);
  }
  // gemini-cli's wrapper too
  const g = await gateSh(['-c', gemini('rm -rf somefile', join(r.dir, 'bgpids.tmp'))], { env: r.env, cwd: r.ws });
  assert.equal(g.code, 126);
  assert.ok(g.stderr.toString().includes(`rejected: use trash instead (rule ${rules}:1)`), g.stderr.toString());
  assert.ok(existsSync(join(r.ws, 'somefile')));
});

test("an rm pre-flight cannot see (a snapshot function) is denied at exec time with the rule's justification; allowed, it runs", async (t) => {
  const r = await rig(t, RULES_FORBID);
  const cwdFile = join(r.dir, 'claude-5e6f-cwd');
  const rules = join(r.env.GATE_HOME, 'rules', 'default.rules');
  const g = await gateSh(['-c', claude(r.snapshot, 'cleanup', cwdFile)], { env: r.env, cwd: r.ws });
  assert.ok(
    g.stderr.toString().includes(`gate-sh: denied: rm -rf somefile: Execution forbidden by policy: use trash instead (rule ${rules}:1)\n`),
    g.stderr.toString(),
  );
  assert.ok(existsSync(join(r.ws, 'somefile')), 'the file survives');

  const a = await rig(t, RULES_ALLOW);
  for (const cmd of ['cleanup', 'rm -rf somefile']) {
    writeFileSync(join(a.ws, 'somefile'), 'x\n');
    const s = claude(a.snapshot, cmd, join(a.dir, 'claude-cwd'));
    const ran = await gateSh(['-c', s], { env: a.env, cwd: a.ws });
    assert.equal(ran.code, 0, `${cmd}: ${ran.stderr}`);
    assert.equal(ran.stderr.length, 0, cmd);
    assert.ok(!existsSync(join(a.ws, 'somefile')), `${cmd}: allowed, it ran`);
  }
});

test('source: a file that runs rm is denied; an unreadable one is not safe; a snapshot is no reason to ask', async (t) => {
  const r = await rig(t, RULES_FORBID, 'approval_policy = "never"\n');
  const runsRm = join(r.dir, 'runs-rm.sh');
  writeFileSync(runsRm, 'echo sourced\nrm -rf somefile\n');
  const big = join(r.dir, 'big.sh');
  writeFileSync(big, `${'# padding\n'.repeat(30_000)}echo big\n`); // over the 256 KiB a sourced file may have
  const denied = await gateSh(['-c', `source ${runsRm} && echo after`], { env: r.env, cwd: r.ws });
  assert.equal(denied.code, 126);
  assert.match(denied.stderr.toString(), /rejected: use trash instead/);
  assert.ok(existsSync(join(r.ws, 'somefile')));
  // too large to read: opaque; since issue 29 it runs in the turn sandbox (under `never` too), every exec
  // it makes decided when it happens, instead of being asked (a denial under `never`)
  const opaque = await gateSh(['-c', `source ${big} && echo after`], { env: r.env, cwd: r.ws });
  assert.equal(opaque.code, 0, opaque.stderr.toString());
  assert.equal(opaque.stdout.toString(), 'big\nafter\n');
  // nothing a sandbox may not see is read (the runtime folder holds the approval folder and its keys),
  // neither directly nor through a symlink: a pre-flight reply lists the literal commands it finds
  const secret = join(gatePaths(r.env).runtime, 'secret.sh');
  writeFileSync(secret, 'echo sourced\n');
  symlinkSync(secret, join(r.ws, 'link.sh'));
  for (const p of [secret, join(r.ws, 'link.sh')]) {
    const hidden = await gateSh(['-c', `source ${p} && echo after`], { env: r.env, cwd: r.ws });
    // (run since issue 29, as opaque code in the turn sandbox, which does not see the runtime folder either)
    assert.notEqual(hidden.code, 0, `${p}: ${hidden.stderr}`);
    assert.equal(hidden.stdout.length, 0, p);
  }
  // the snapshot, sourced directly, asks nothing
  const snap = `source ${r.snapshot} && echo after`;
  same(await gateSh(['-c', snap], { env: r.env, cwd: r.ws }), await bash(['-c', snap], { env: r.env, cwd: r.ws }), snap);
  // a sourced file's contents decide: once rm is gone from it, it runs (the cached answer is not reused)
  writeFileSync(runsRm, 'echo sourced\n');
  const ran = await gateSh(['-c', `source ${runsRm} && echo after`], { env: r.env, cwd: r.ws });
  assert.equal(ran.stdout.toString(), 'sourced\nafter\n', ran.stderr.toString());
});

test("Codex's environment (PAGER=cat GIT_PAGER=cat GH_PAGER=cat) asks nothing, whichever environment started the daemon", async (t) => {
  // a daemon started without Codex's variables and a caller with them; then the reverse
  for (const [daemonEnv, callerExtra] of [[{}, CODEX_ENV], [CODEX_ENV, {}]]) {
    const r = await rig(t, RULES_FORBID, '', daemonEnv);
    const callerEnv = { ...r.env, ...callerExtra };
    const script = 'git status && echo ok';
    const g = await gateSh(['-lc', script], { env: callerEnv, cwd: r.ws });
    same(g, await bash(['-lc', script], { env: callerEnv, cwd: r.ws }), `${JSON.stringify(daemonEnv)}: ${script}`);
    // a pager that runs other code still stops the escalated run, and the denial names the variable
    const evil = await gateSh(['-lc', script], { env: { ...callerEnv, GIT_PAGER: 'sh -c "touch pwned"' }, cwd: r.ws });
    assert.equal(evil.code === 0, false, evil.stderr.toString());
    assert.match(evil.stderr.toString(), /code-loading variables: GIT_PAGER/);
    assert.ok(!existsSync(join(r.ws, 'pwned')));
  }
});

for (const policy of ['never', 'untrusted']) {
  test(`Codex's bash -lc with its environment, ${policy}: an allowed command runs with no prompt, byte-exact with bash`, async (t) => {
    const r = await rig(t, RULES_FORBID, `approval_policy = "${policy}"\n`);
    const env = { ...r.env, ...CODEX_ENV };
    const script = 'git status && echo ok';
    same(await gateSh(['-lc', script], { env, cwd: r.ws }), await bash(['-lc', script], { env, cwd: r.ws }), script);
    const denied = await gateSh(['-lc', 'rm -rf somefile'], { env, cwd: r.ws });
    assert.equal(denied.code, 126);
    assert.ok(denied.stderr.toString().includes('rejected: use trash instead (rule '), denied.stderr.toString());
    assert.ok(existsSync(join(r.ws, 'somefile')));
  });
}

