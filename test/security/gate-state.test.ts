// The gate's own state is out of reach of the runs it gates under danger-full-access (issue 28, finding 5),
// end to end: a real daemon (danger-full-access, on-request, `rm` forbidden), real gate-sh and exec gate.
// The attack as the red team made it: the run empties the rules file, the daemon reloads the empty
// rules, and the next `rm` runs. Here the rules, config and audit log stay as they are, the approval
// socket is out of sight, the guard cannot be undone from inside (umount, remount, a user namespace of the
// run's own), nor reached through another process's view of the filesystem (/proc/<pid>/root of the daemon
// or of a process outside the run: the host's view, without the guard's mounts), and `rm` stays denied;
// everything else keeps full access (a file outside the workspace, the host's processes, their status).
// The same rm runs once the user (outside) empties the rules: the reload is real, so what the run could
// not write is what kept rm denied. Test-only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { type DaemonProc, startDaemon, waitFor } from '../helpers/daemon.js';

const RULES = 'prefix_rule(pattern=["rm"], decision="forbidden")\n';
const CONFIG = 'sandbox_mode = "danger-full-access"\napproval_policy = "on-request"\n';

// what a program of the workspace tries (a program's child is judged by the rules only: nothing asks)
const ATTACK = `
set +e
: > "$GATE_HOME/rules/default.rules"; echo "truncate rules=$?"
rm -f "$GATE_HOME/rules/default.rules" 2>/dev/null; echo "unlink rules=$?"
mv "$GATE_HOME/rules" "$GATE_HOME/rules.old" 2>/dev/null; echo "move rules=$?"
printf 'sandbox_mode = "danger-full-access"\\napproval_policy = "never"\\n' > "$GATE_HOME/config.toml"; echo "config=$?"
echo '{"forged":1}' >> "$GATE_HOME/audit.jsonl"; echo "audit=$?"
mkdir -p "$CODEX_HOME/rules" && echo 'prefix_rule(pattern=["rm"], decision="allow")' > "$CODEX_HOME/rules/x.rules"; echo "codex rules=$?"
test -e "$APPROVAL_SOCK"; echo "approval socket seen=$((1 - $?))"
umount "$GATE_HOME" 2>/dev/null; echo "umount=$?"
mount -o remount,rw,bind "$GATE_HOME" 2>/dev/null; echo "remount=$?"
unshare -Urm sh -c ': > "$GATE_HOME/rules/default.rules"' 2>/dev/null; echo "userns=$?"
echo outside > "$OUTSIDE/written"; echo "outside=$?"
kill -0 "$DAEMON_PID"; echo "host process=$?"
# through another process's view of the filesystem (/proc/<pid>/root: the host's, without the guard's mounts)
: > "/proc/$DAEMON_PID/root$GATE_HOME/rules/default.rules" 2>/dev/null; echo "rules by the daemon's root=$?"
: > "/proc/$OUTER_PID/root$GATE_HOME/config.toml" 2>/dev/null; echo "config by an outside process's root=$?"
test -S "/proc/$DAEMON_PID/root$APPROVAL_SOCK"; echo "approval socket seen by the daemon's root=$((1 - $?))"
readlink "/proc/$DAEMON_PID/fd/0" >/dev/null 2>&1; echo "daemon's descriptors=$?"
(exec 3<>"/proc/$DAEMON_PID/mem") 2>/dev/null; echo "daemon's memory=$?"
head -c1 "/proc/$DAEMON_PID/status" >/dev/null; echo "host process status=$?"
sleep 30 & own=$!; test -d "/proc/$own/root/"; echo "own process root=$?"; kill $own
`;

let rig: DaemonProc;
let outside: string;
before(async () => {
  rig = await startDaemon({ rules: RULES, config: CONFIG, env: { GATE_NO_AUTOSTART: '1' }, workspace: 'w' });
  outside = join(rig.te.dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(rig.ws, 'attack.sh'), ATTACK);
  writeFileSync(join(rig.ws, 'attack.py'), 'import subprocess\nsubprocess.run(["bash", "attack.sh"])\n');
  writeFileSync(join(rig.ws, 'rm.py'), 'import os\nprint("rm", os.system("rm victim"))\n');
});
after(async () => {
  await rig.close();
});

const state = () => ({
  rules: readFileSync(join(rig.paths.rulesDir, 'default.rules'), 'utf8'),
  config: readFileSync(rig.paths.configFile, 'utf8'),
  codexRules: existsSync(join(rig.env.CODEX_HOME, 'rules', 'x.rules')),
});

test('danger-full-access: a run cannot change the rules, config or audit log, nor undo the guard; rm stays denied', async () => {
  writeFileSync(join(rig.ws, 'victim'), 'keep\n');
  const audit = readFileSync(rig.paths.auditLog, 'utf8');
  // OUTER_PID: this test process, outside the run like the user's shell
  const env = { ...rig.env, OUTSIDE: outside, DAEMON_PID: String(rig.child.pid), OUTER_PID: String(process.pid), APPROVAL_SOCK: rig.paths.approvalSock };
  const r = await run(GATE_SH, ['-c', 'python3 attack.py'], { env, cwd: rig.ws });
  assert.equal(r.code, 0, r.stderr);
  const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('=')));
  const through = ["rules by the daemon's root", "config by an outside process's root", "daemon's descriptors", "daemon's memory"];
  for (const k of ['truncate rules', 'unlink rules', 'move rules', 'config', 'audit', 'codex rules', 'umount', 'remount', 'userns', ...through])
    assert.notEqual(got[k], '0', `${k} succeeded: ${r.stdout}${r.stderr}`);
  assert.equal(got['approval socket seen'], '0', r.stdout);
  assert.equal(got["approval socket seen by the daemon's root"], '0', r.stdout);
  // nothing else is taken from the run
  assert.equal(got.outside, '0', r.stderr);
  assert.equal(readFileSync(join(outside, 'written'), 'utf8'), 'outside\n');
  assert.equal(got['host process'], '0', r.stderr);
  assert.equal(got['host process status'], '0', r.stderr);
  assert.equal(got['own process root'], '0', `the run's own processes stay open to it: ${r.stdout}${r.stderr}`);
  assert.deepEqual(state(), { rules: RULES, config: CONFIG, codexRules: false });
  assert.ok(!readFileSync(rig.paths.auditLog, 'utf8').slice(audit.length).includes('"forged"'));
  // the red team's next step: the forbidden rm, from a program so pre-flight does not see it first
  const d = await run(GATE_SH, ['-c', 'python3 rm.py'], { env: rig.env, cwd: rig.ws });
  assert.match(d.stderr, /gate-sh: denied: rm victim/);
  assert.doesNotMatch(d.stdout, /^rm 0$/m);
  assert.ok(existsSync(join(rig.ws, 'victim')));
});

test('the same rm runs once the user empties the rules outside (the reload is real)', async () => {
  writeFileSync(join(rig.paths.rulesDir, 'default.rules'), '');
  // wait for the daemon's reload: rm is no longer denied
  await waitFor(async () => {
    const r = await run(GATE_SH, ['-c', 'python3 rm.py'], { env: rig.env, cwd: rig.ws });
    return /^rm 0$/m.test(r.stdout) ? true : undefined;
  }, 'the emptied rules to be loaded');
  assert.ok(!existsSync(join(rig.ws, 'victim')));
  rmSync(join(outside, 'written'));
});
