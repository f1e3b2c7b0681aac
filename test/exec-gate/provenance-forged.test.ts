/**
 * Where a command came from cannot be claimed from inside (docs/exec-gate.md, "Where a command came from",
 * Trust): an allow rule takes a command out of the sandbox only when the process that runs it is the model's
 * own, and nothing a build does makes its command read so. Two ways a Makefile tried, each beside the model's
 * own command that the same rule does take out:
 *  - a request of its own making, sent to the daemon's request socket, naming the run's own bash as the
 *    process whose ancestry the daemon reads (`host_pid`), then redeemed on escalate.sock: refused by the
 *    runner, which reads the ancestry of the process that redeems (SO_PEERCRED);
 *  - a recipe's background job, orphaned when the recipe's shell exits and adopted by bubblewrap's init (a
 *    sandbox of its own per command), which then read as the run's own shell: unsure, so in place.
 * Real daemon, real gate-sh, real bubblewrap; the files the build tries to make lie outside every writable
 * folder of the sandbox. Test-only.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { killAll, startDaemon, waitFor, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { LIBGATE, preloadFirst, SHIMS_DIR } from '../../src/exec/index.js';

after(killAll);

/** workspace-write without /tmp: a folder beside the workspace (under the temp folder) is outside */
const CONFIG =
  'sandbox_mode = "workspace-write"\napproval_policy = "on-request"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';
const TOUCH_ALLOWED = 'prefix_rule(pattern=["touch"], decision="allow")';

/** An exec request as the LD_PRELOAD layer's, with a host_pid of its choosing, and the escalation it grants
 * redeemed with this process's descriptors; prints both answers. */
const FORGE = `import json, os, socket, sys, struct, array
host_pid, prog, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
me = os.path.join(os.environ['GATE_CLIENT_DIR'], 'f%d.sock' % os.getpid())
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(me); s.settimeout(20)
req = {"v": 1, "id": "forge-%d" % os.getpid(), "type": "exec", "run_id": os.environ['GATE_RUN'], "program": prog,
       "argv": [os.path.basename(prog)] + args, "cwd": os.getcwd(), "pid": os.getpid(), "env": {}, "host_pid": host_pid}
s.sendto(json.dumps(req).encode(), os.environ['GATE_REQUEST_SOCK'])
while True:
    d = s.recv(65536).decode()
    if '"pending"' not in d: break
os.unlink(me)
print('answer:', d)
tok = json.loads(d).get('escalation_token')
if tok:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(os.environ['GATE_ESCALATE_SOCK'])
    body = json.dumps({"token": tok, "env": ["PATH=/usr/bin:/bin"]}).encode()
    c.sendmsg([struct.pack('<I', len(body)) + body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [0, 1, 2]))])
    print('escalation:', c.recv(4096)[4:].decode())
`;

const TOUCH_ASKED = 'prefix_rule(pattern=["touch"], decision="prompt")';

async function rig(rule = TOUCH_ALLOWED): Promise<{ d: DaemonProc; outside: string }> {
  // (a prompt rule: a person approves every question, as one who reads only the command would)
  const d = await startDaemon({ workspace: 'w', config: CONFIG, rules: [rule], autoApprove: rule === TOUCH_ASKED, env: { GATE_NO_AUTOSTART: '1' } });
  const outside = join(d.te.dir, 'outside');
  mkdirSync(outside);
  return { d, outside };
}

const exe = (pid: string) => {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    return '';
  }
};

/** The host pid of the run's own bash: the bash whose command line carries `mark` and whose parent is not a bash. */
function runShell(mark: string): number | undefined {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (exe(pid) !== 'bash' || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (exe(ppid) !== 'bash') return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

for (const rule of [TOUCH_ALLOWED, TOUCH_ASKED])
test(`a build's request naming the run's own bash as its process does not take its command out of the sandbox (${rule})`, { timeout: 120_000 }, async (t) => {
  const { d, outside } = await rig(rule);
  t.after(() => d.close());
  writeFileSync(join(d.ws, 'forge.py'), FORGE);
  writeFileSync(join(d.ws, 'Makefile'), `all:\n\tpython3 forge.py $$(cat host-pid) /usr/bin/touch ${outside}/by-make\n`);
  const mark = 'mark-forged-host-pid';
  // (the model's own inline code: its touch is the model's text, which the rule takes out of the sandbox)
  const own = `python3 -c 'import os; os.system("touch ${outside}/by-model")'`;
  const script = `: ${mark}; while [ ! -s host-pid ]; do sleep 0.05; done; make -s; ${own}`;
  const gated = run(GATE_SH, ['-c', script], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  const pid = await waitFor(() => runShell(mark), "the run's bash");
  writeFileSync(join(d.ws, 'host-pid'), String(pid));
  const r = await gated;
  // the daemon read the named process's ancestry and granted; the process that redeemed is make's
  assert.match(r.stdout, /answer: .*"Escalate"/, r.stdout + r.stderr);
  assert.match(r.stdout, /escalation: \{"error":"the caller \(pid \d+\) is not a process of the model's own commands/, r.stdout);
  assert.equal(existsSync(join(outside, 'by-make')), false);
  // the model's own command, allowed by the same rule: out of the sandbox
  assert.equal(existsSync(join(outside, 'by-model')), true, r.stderr);
});

test("a build's background job adopted by bubblewrap's init is not the run's own shell", { timeout: 120_000 }, async (t) => {
  const { d, outside } = await rig();
  t.after(() => d.close());
  // the job puts the LD_PRELOAD layer back (below make it is left out), which escalates what the daemon answers
  // Escalate; it waits until make and the recipe's shell are gone, so that its parent is bubblewrap's init
  const lib = [preloadFirst(SHIMS_DIR), LIBGATE].filter(Boolean).join(':');
  const job = `while [ ! -e go ]; do sleep 0.05; done; LD_PRELOAD=${lib} touch ${outside}/by-job; touch done`;
  writeFileSync(join(d.ws, 'Makefile'), `all:\n\t@(${job.replaceAll('$', () => '$$')}) &\n`);
  const own = `python3 -c 'import os; os.system("touch ${outside}/by-model")'`;
  const script = `make -s; touch go; while [ ! -e done ]; do sleep 0.05; done; ${own}`;
  // a sandbox of its own per command: bubblewrap's init adopts the run's orphans
  const r = await run(GATE_SH, ['-c', script], { env: { ...d.env, GATE_SESSION_SANDBOX: 'off' }, cwd: d.ws, timeoutMs: 90_000 });
  assert.match(r.stderr, /touch: cannot touch '[^']*by-job': Read-only file system/, r.stderr);
  assert.equal(existsSync(join(outside, 'by-job')), false);
  assert.equal(existsSync(join(outside, 'by-model')), true, r.stderr);
  const audit = readFileSync(d.paths.auditLog, 'utf8');
  assert.match(audit, /"argv":\["\/(usr\/)?bin\/touch","[^"]*by-job"\][^\n]*"action":"Run"/);
});

/** in a recipe: the model's bash (make's parent), its memory opened for writing, then made to run a command by a
 * debugger (gdb, when installed) */
const TAKE_OVER = (outside: string) => `import os, shutil, subprocess
make = os.getppid()
with open('/proc/%d/stat' % make) as f: bash = int(f.read().rsplit(')', 1)[1].split()[1])
try:
    open('/proc/%d/mem' % bash, 'r+b').close(); print('mem: opened')
except OSError as e: print('mem:', e.strerror)
# a tool that puts its own domain off (an inspector, shims/libgate.c) stays in the build's all the same
r = subprocess.run(['ls', '-l', '/proc/%d/exe' % bash], capture_output=True, text=True)
print('ls:', 'Permission denied' if 'Permission denied' in r.stderr else r.stdout.strip())
if shutil.which('gdb'):
    r = subprocess.run(['gdb', '-p', str(bash), '-batch', '-ex', 'call (int)system("touch ${outside}/by-ptrace")'], capture_output=True, text=True)
    print('gdb:', r.stdout[-300:], r.stderr[-300:])
`;

test("a build cannot take over the model's own shell (ptrace, /proc/<pid>/mem) to have a command of its own leave the sandbox", { timeout: 120_000 }, async (t) => {
  const { d, outside } = await rig();
  t.after(() => d.close());
  writeFileSync(join(d.ws, 'take-over.py'), TAKE_OVER(outside));
  // (the recipe's python is make's child: its parent's parent is the run's bash)
  writeFileSync(join(d.ws, 'Makefile'), 'all:\n\t@python3 take-over.py\n');
  const own = `python3 -c 'import os; os.system("touch ${outside}/by-model")'`;
  const r = await run(GATE_SH, ['-c', `make -s; ${own}`], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  assert.match(r.stdout, /^mem: (Permission denied|Operation not permitted)$/m, r.stdout + r.stderr);
  assert.match(r.stdout, /^ls: Permission denied$/m, r.stdout + r.stderr);
  assert.equal(existsSync(join(outside, 'by-ptrace')), false, r.stdout);
  assert.equal(existsSync(join(outside, 'by-model')), true, r.stderr);
});

test('a file the model sources (one a build wrote, one the repository holds) takes no command of its own out of the sandbox', { timeout: 120_000 }, async (t) => {
  const { d, outside } = await rig();
  t.after(() => d.close());
  // a build rewrites what the model sources next (a package's setup writing .venv/bin/activate)
  writeFileSync(join(d.ws, 'Makefile'), `all:\n\t@printf 'touch ${outside}/by-activate\\n' > activate\n`);
  // a file of the repository: a command, and a function the script calls after, in this shell and in a nested one
  writeFileSync(join(d.ws, 'env.sh'), `touch ${outside}/by-env\nf() { touch ${outside}/by-function; }\nexport -f f\n`);
  const gsh = (script: string) => run(GATE_SH, ['-c', script], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  const built = await gsh('make -s; . ./activate; echo sourced=$?');
  assert.match(built.stdout, /^sourced=1$/m, built.stderr);
  assert.match(built.stderr, /touch: cannot touch '[^']*by-activate': Read-only file system/);
  const repo = await gsh('source env.sh; f; bash -c f');
  assert.match(repo.stderr, /touch: cannot touch '[^']*by-env': Read-only file system/, repo.stderr);
  assert.equal(repo.stderr.match(/^touch: cannot touch '[^']*by-function': Read-only file system$/gm)?.length, 2, repo.stderr);
  for (const f of ['by-activate', 'by-env', 'by-function']) assert.equal(existsSync(join(outside, f)), false, f);
  // the model's own command, in a run that sources nothing, leaves by the rule
  const own = await gsh(`python3 -c 'import os; os.system("touch ${outside}/by-model")'`);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(existsSync(join(outside, 'by-model')), true);
});

test("a nested shell whose script the model did not spell out (a sourced file's, a script file's, one read from a file) takes no command out of the sandbox", { timeout: 120_000 }, async (t) => {
  const { d, outside } = await rig();
  t.after(() => d.close());
  // each nested `bash -c`/`sh -c` gets a pre-flight of its own (the PATH shim), which judges its text exactly but
  // cannot tell who wrote it: its rule-allowed touch must not leave by that settlement
  writeFileSync(join(d.ws, 'env.sh'), `bash -c 'touch ${outside}/by-sourced-bash'\nsh -c 'touch ${outside}/by-sourced-sh'\n`);
  writeFileSync(join(d.ws, 'build.sh'), `bash -c 'touch ${outside}/by-script-file'\n`);
  writeFileSync(join(d.ws, 'cmd.txt'), `touch ${outside}/by-read-text\n`);
  const gsh = (script: string) => run(GATE_SH, ['-c', script], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  for (const script of ['. ./env.sh', 'bash ./build.sh', 'bash -c "$(cat cmd.txt)"']) {
    const r = await gsh(script);
    assert.match(r.stderr, /touch: cannot touch '[^']*by-[a-z-]+': Read-only file system/, `${script}: ${r.stderr}`);
  }
  for (const f of ['by-sourced-bash', 'by-sourced-sh', 'by-script-file', 'by-read-text']) assert.equal(existsSync(join(outside, f)), false, f);
  // the model's own nested shell, spelled out in its script, keeps the rule
  const own = await gsh(`bash -c 'touch ${outside}/by-model-nested'`);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(existsSync(join(outside, 'by-model-nested')), true);
});
