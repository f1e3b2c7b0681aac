// Session sandboxes (issue 18): background jobs and servers a gated command leaves running live on inside
// the session's sandbox, as under bash; they are listed, killed, audited, still gated and confined, and end
// with the daemon. Real daemon, real gate-sh (native and Node entries), bubblewrap, exec gate; loopback only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { GATE, GATE_SH, ROOT } from '../helpers/env.js';
import { gateSh, run, execGateOptions } from '../exec-gate/helpers.js';
import type { SessionJob } from '../../src/daemon/session-sandbox.js';
import { auditLines, type DaemonProc, startDaemon, waitFor } from '../helpers/daemon.js';
import { approvalCall } from '../../src/client/index.js';

// a port of its own per test: the network-on test binds the host's loopback
let port = 20000 + Math.floor(Math.random() * 20000);
const curl = (p: number): string => `curl -s -m 5 -o /dev/null -w "%{http_code}\\n" http://127.0.0.1:${p}/ || echo unreachable`;
// the transcript, waiting for the server to answer rather than a fixed second (the machine is shared)
const serve = (p: number): string =>
  `nohup python3 -m http.server ${p} --bind 127.0.0.1 > srv.log 2>&1 & for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:${p}/ && break; sleep 0.1; done; echo started`;

const rigs: DaemonProc[] = [];
after(async () => {
  for (const r of rigs) await r.close();
});

async function rig(o: { rules?: string[]; config?: string } = {}): Promise<DaemonProc> {
  const r = await startDaemon(
    execGateOptions({ rules: o.rules ?? [], ...(o.config ? { config: o.config } : { env: { GATE_SANDBOX_MODE: 'workspace-write' } }) }),
  );
  rigs.push(r);
  return r;
}

/** The session's jobs as `gate jobs` asks for them (the same approval-channel call, made in this process: the
 * waits below poll it, and a Node process per poll was most of this file's CPU). */
async function jobs(r: DaemonProc): Promise<SessionJob[]> {
  return (await approvalCall(r.paths, 'jobs')).jobs ?? [];
}

/** `gate jobs --json` itself: the program a person runs. */
async function jobsCli(r: DaemonProc): Promise<SessionJob[]> {
  const out = await run(process.execPath, [GATE, 'jobs', '--json'], { env: r.env, cwd: r.ws });
  assert.equal(out.code, 0, out.stderr);
  return JSON.parse(out.stdout) as SessionJob[];
}

/** Running: the pid exists and is not a zombie (a dead child its parent has not reaped yet). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function hostCurl(p: number): Promise<string> {
  const r = await run('/bin/bash', ['-c', curl(p)], { env: process.env as Record<string, string>, cwd: '/' });
  return r.stdout.trim();
}

for (const entry of ['native', 'node'] as const) {
  test(`${entry}: a server started by one command answers the next (network off: loopback inside the session sandbox only); gate jobs lists it and gate jobs kill ends it`, {
    timeout: 90_000,
  }, async () => {
    const PORT = port++;
    const r = await rig();
    const env: Record<string, string> = entry === 'node' ? { GATE_SH_NODE: '1' } : {};
    const first = await gateSh(r, serve(PORT), { env });
    assert.equal(first.stdout, 'started\n', first.stderr);
    assert.equal(first.code, 0);
    const second = await gateSh(r, curl(PORT), { env });
    assert.equal(second.stdout, '200\n', second.stderr);
    assert.notEqual(await hostCurl(PORT), '200', 'the sandbox has a loopback of its own: the host cannot reach the server');
    await waitFor(async () => (await jobs(r)).find((j) => j.argv.includes('http.server')), 'the server in the session\'s jobs');
    const listed = (await jobsCli(r)).find((j) => j.argv.includes('http.server'));
    assert.ok(listed, 'gate jobs --json lists the server');
    assert.equal(listed.cwd, r.ws);
    assert.equal(listed.outlived_command, true);
    assert.ok(running(listed.pid));
    const k = await run(process.execPath, [GATE, 'jobs', 'kill', String(listed.pid)], { env: r.env, cwd: r.ws });
    assert.equal(k.stdout, 'killed 1 process\n', k.stderr);
    await waitFor(() => !running(listed.pid) || undefined, 'the server to end');
    const third = await gateSh(r, curl(PORT), { env });
    assert.equal(third.stdout, '000\nunreachable\n');
    // audited: the job outlived its command (started), and ended with SIGKILL's status
    await waitFor(() => readFileSync(r.paths.auditLog, 'utf8').includes('"exit_status":137') || undefined, 'the job end record');
    // (auditLines: a record still being appended is waited for, not read half)
    const recs = auditLines<Record<string, any>>(r.paths.auditLog).filter((x) => x.kind === 'job');
    assert.ok(
      recs.some((x) => /^started: /.test(x.detail) && x.argv.includes('http.server') && x.cwd === r.ws && typeof x.run_id === 'string'),
      JSON.stringify(recs),
    );
    assert.ok(recs.some((x) => /^ended: /.test(x.detail) && x.exit_status === 137));
    const human = await run(process.execPath, [GATE, 'log'], { env: r.env, cwd: r.ws });
    assert.match(human.stdout, /  job .* started: \S*python3 -m http\.server /);
    assert.match(human.stdout, /  job .* ended \(exit 137\): \S*python3 -m http\.server /);
  });
}

test('network on: the server is on the host loopback, and the next command reaches it; gate jobs kill all ends it', { timeout: 90_000 }, async () => {
  const PORT = port++;
  const r = await rig({ config: 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nnetwork_access = true\n' });
  assert.equal((await gateSh(r, serve(PORT))).stdout, 'started\n');
  assert.equal((await gateSh(r, curl(PORT))).stdout, '200\n');
  assert.equal(await hostCurl(PORT), '200');
  const j = await waitFor(async () => (await jobs(r)).find((x) => x.argv.includes('http.server')), 'the server in gate jobs');
  const k = await run(process.execPath, [GATE, 'jobs', 'kill', 'all'], { env: r.env, cwd: r.ws });
  assert.equal(k.code, 0, k.stderr);
  await waitFor(() => !running(j.pid) || undefined, 'the server to end');
  assert.equal((await gateSh(r, curl(PORT))).stdout, '000\nunreachable\n');
});

test("bash's semantics: gate-sh returns when bash does; $!, wait and jobs work inside one script", { timeout: 60_000 }, async () => {
  const r = await rig();
  const started = Date.now();
  const bg = await gateSh(r, 'sleep 30 > /dev/null 2>&1 & echo "pid $!"', { timeoutMs: 20_000 });
  assert.equal(bg.code, 0, bg.stderr);
  assert.match(bg.stdout, /^pid \d+\n$/);
  assert.ok(Date.now() - started < 20_000);
  const inner = Number(/pid (\d+)/.exec(bg.stdout)![1]);
  // a later command sees it in the same pid namespace and can kill it by the pid $! gave
  const k = await gateSh(r, `kill ${inner} && echo killed`);
  assert.equal(k.stdout, 'killed\n', k.stderr);
  const w = await gateSh(r, 'sleep 0.2 & p=$!; jobs | wc -l; wait $p; echo "waited $?"; (exit 7) & wait $!; echo "status $?"');
  assert.equal(w.stdout, '1\nwaited 0\nstatus 7\n', w.stderr);
});

for (const entry of ['native', 'node'] as const) {
  test(`${entry}: a job holding the caller's stderr pipe: gate-sh exits when bash does, the pipe closes when the job does, every byte arrives`, { timeout: 60_000 }, async () => {
    const r = await rig();
    const env = { ...r.env, ...(entry === 'node' ? { GATE_SH_NODE: '1' } : {}) };
    const c = spawn(GATE_SH, ['-c', 'echo out; echo err >&2; (sleep 3; echo late >&2) & exit 3'], { env, cwd: r.ws, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout!.on('data', (d) => (out += d));
    c.stderr!.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((res) => c.once('exit', (x) => res(x)));
    const errAtExit = err;
    await new Promise((res) => c.once('close', res));
    assert.equal(code, 3);
    assert.equal(out, 'out\n');
    assert.equal(err, 'err\nlate\n');
    // the order of events, not a time: gate-sh exited before the job wrote, the pipe stayed open for it
    assert.ok(!errAtExit.includes('late'), 'gate-sh waited for the job');
  });
}

test('a background job stays under the exec gate (both layers) and inside the writable roots after its command returned', { timeout: 60_000 }, async () => {
  const r = await rig({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'] });
  // "$B/static-exec" /bin/rm ...: a static program's exec, which only the kernel layer sees; pre-flight
  // sees static-exec, not rm, so the script runs and the job meets the gate at exec time
  const outside = mkdtempSync('/var/tmp/gate-out-');
  const B = mkdtempSync('/var/tmp/gate-bin-');
  try {
    execFileSync('gcc', ['-static', '-O2', '-o', join(B, 'static-exec'), join(ROOT, 'test', 'exec-gate', 'programs', 'static-exec.c')]);
    writeFileSync(join(r.ws, 'victim'), 'x');
    const script = `(sleep 1.5; touch inside; echo "touch=$?" > touch.out; ${B}/static-exec /bin/rm rm -f victim; echo "rm=$?" > rm.out; echo x > ${outside}/f; echo "out=$?" > out.out) > job.err 2>&1 & echo back`;
    const g = await gateSh(r, script);
    assert.equal(g.stdout, 'back\n', g.stderr);
    await waitFor(() => existsSync(join(r.ws, 'out.out')) || undefined, 'the job to finish');
    // the allowed exec after the command ended ran (its supervisor lives on), the forbidden one did not
    assert.equal(readFileSync(join(r.ws, 'touch.out'), 'utf8'), 'touch=0\n');
    assert.ok(existsSync(join(r.ws, 'inside')));
    assert.equal(readFileSync(join(r.ws, 'rm.out'), 'utf8'), 'rm=126\n');
    assert.ok(existsSync(join(r.ws, 'victim')));
    assert.match(readFileSync(join(r.ws, 'job.err'), 'utf8'), /static-exec: execve: Permission denied/);
    assert.equal(readFileSync(join(r.ws, 'out.out'), 'utf8'), 'out=1\n');
    assert.ok(!existsSync(join(outside, 'f')));
  } finally {
    rmSync(outside, { recursive: true, force: true });
    rmSync(B, { recursive: true, force: true });
  }
});

test('a run with another sandbox policy, or another workspace, neither sees nor joins the session sandbox', { timeout: 90_000 }, async () => {
  // the mode in the config, not in the callers' environment: a caller's GATE_SANDBOX_MODE that differs from
  // the daemon's is refused (issue 32), and this test changes the daemon's
  const r = await rig({ config: 'sandbox_mode = "workspace-write"\n' });
  const g = await gateSh(r, 'sleep 300 > /dev/null 2>&1 & echo $!');
  const inner = g.stdout.trim();
  // the command ends once the job is forked; the job's exec of sleep may still be on its way through the exec
  // gate then, and the checks below look for it by its command line
  const execd = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\x00300\x00';
    } catch {
      return false;
    }
  };
  await waitFor(async () => (await jobs(r)).some((j) => execd(j.pid)) || undefined, 'the job to run sleep 300');
  const seen = `ps -e -o args= | grep -c '^sleep 300' ; kill -0 ${inner} 2>/dev/null && echo same || echo other`;
  const check = async (want: string, why: string, o: { cwd?: string } = {}): Promise<void> => {
    const x = await gateSh(r, seen, o);
    assert.equal(x.stdout, want, `${why}: ${x.stderr}; jobs ${JSON.stringify(await jobs(r))}`);
  };
  await check('1\nsame\n', 'the next command in the same workspace');
  const set = await run(process.execPath, [GATE, 'config', 'set', 'sandbox_mode', 'read-only'], { env: r.env, cwd: r.ws });
  assert.equal(set.code, 0, set.stderr);
  await check('0\nother\n', 'read-only');
  await run(process.execPath, [GATE, 'config', 'set', 'sandbox_mode', 'workspace-write'], { env: r.env, cwd: r.ws });
  const elsewhere = join(r.te.dir, 'w2');
  mkdirSync(elsewhere);
  await check('0\nother\n', 'another workspace', { cwd: elsewhere });
  await check('1\nsame\n', 'back in the first workspace');
});

test('two sessions are isolated: each has its own processes and its own loopback', { timeout: 90_000 }, async () => {
  const PORT = port++;
  const a = await rig();
  const b = await rig();
  assert.equal((await gateSh(a, serve(PORT))).stdout, 'started\n');
  // the same port in the other session: its own loopback, so it binds, and each sees one server, its own
  assert.equal((await gateSh(b, serve(PORT))).stdout, 'started\n');
  for (const r of [a, b]) {
    const seen = await gateSh(r, `${curl(PORT)}; pgrep -fc 'm http[.]server'; grep -c 'Address already in use' srv.log || true`);
    assert.equal(seen.stdout, '200\n1\n0\n', seen.stderr);
  }
  const ja = await jobs(a);
  const jb = await jobs(b);
  assert.equal(ja.length, 1);
  assert.equal(jb.length, 1);
  assert.notEqual(ja[0].pid, jb[0].pid);
});

test('daemon stop ends every session sandbox and everything in it: nothing is left running', { timeout: 90_000 }, async () => {
  const PORT = port++;
  const r = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  try {
    await gateSh(r, `${serve(PORT)}; sleep 300 > /dev/null 2>&1 &`);
    await gateSh(r, '(nohup sleep 301 > /dev/null 2>&1 < /dev/null &)', { env: { GATE_SH_NODE: '1' } });
    const list = await waitFor(async () => {
      const j = await jobs(r);
      return j.length >= 3 ? j : undefined;
    }, 'three jobs');
    const st = await run(process.execPath, [GATE, 'status', '--json'], { env: r.env, cwd: r.ws });
    const holders = (JSON.parse(st.stdout).session_sandboxes.sandboxes as { holder_pid: number }[]).map((s) => s.holder_pid);
    assert.equal(holders.length, 1);
    const supervisors = listPids().filter((p) => cmdline(p).includes(`--session-ns ${holders[0]}:`));
    assert.ok(supervisors.length >= 1, 'the jobs keep their exec supervisors');
    const pids = [...list.map((j) => j.pid), ...holders, ...supervisors];
    assert.ok(pids.every(running));
    await r.stop();
    await waitFor(() => pids.every((p) => !running(p)) || undefined, 'every job, holder and supervisor to end');
  } finally {
    await r.close();
  }
});

function listPids(): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

for (const entry of ['native', 'node'] as const) {
  test(`${entry}: gate-sh killed mid-command with its process group (as a timeout does): what the command started ends with it, earlier jobs stay`, {
    timeout: 60_000,
  }, async () => {
    const r = await rig();
    const env = { ...r.env, ...(entry === 'node' ? { GATE_SH_NODE: '1' } : {}) };
    await gateSh(r, 'sleep 303 > /dev/null 2>&1 &', { env });
    const c = spawn(GATE_SH, ['-c', 'sleep 304 > /dev/null 2>&1 & sleep 305'], { env, cwd: r.ws, detached: true, stdio: 'ignore' });
    const named = (j: SessionJob[], a: string) => j.find((x) => x.argv.join(' ') === a);
    const started = await waitFor(async () => {
      const j = await jobs(r);
      return named(j, 'sleep 304') && named(j, 'sleep 305') ? [named(j, 'sleep 304')!, named(j, 'sleep 305')!] : undefined;
    }, 'the command and its background job');
    process.kill(-c.pid!, 'SIGKILL');
    await waitFor(() => started.every((x) => !running(x.pid)) || undefined, 'the killed command and what it started to end');
    const earlier = named(await jobs(r), 'sleep 303');
    assert.ok(earlier && running(earlier.pid), 'the earlier command\'s job lives on');
  });
}

/** The run's exec supervisor: a gate-launch whose parent is a gate-launch (the front), working in cwd. */
function supervisorIn(cwd: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (stat.includes('(gate-launch)') && readFileSync(`/proc/${ppid}/stat`, 'utf8').includes('(gate-launch)') && readlinkSync(`/proc/${d}/cwd`) === cwd)
        return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

// Joining the session sandbox, bubblewrap runs without --die-with-parent (its intermediate processes made
// that SIGKILL the command now and then on a busy machine: shims/launch/front.c); the supervisor's end must
// still take the command down, as bubblewrap's option did.
test('the exec supervisor killed mid-command in a session sandbox: gate-sh says so and exits 126, the command and what it started end, earlier jobs stay', {
  timeout: 60_000,
}, async () => {
  const r = await rig();
  await gateSh(r, 'sleep 313 > /dev/null 2>&1 &');
  const pending = gateSh(r, 'sleep 314 > /dev/null 2>&1 & sleep 315', { timeoutMs: 30_000 });
  const named = (j: SessionJob[], a: string) => j.find((x) => x.argv.join(' ') === a);
  const started = await waitFor(async () => {
    const j = await jobs(r);
    return named(j, 'sleep 314') && named(j, 'sleep 315') ? [named(j, 'sleep 314')!, named(j, 'sleep 315')!] : undefined;
  }, 'the command and its background job');
  const sup = await waitFor(() => supervisorIn(realpathSync(r.ws)), 'the run\'s supervisor');
  process.kill(sup, 'SIGKILL');
  const res = await pending;
  assert.equal(res.code, 126, res.stderr);
  assert.match(res.stderr, /gate-sh: exec gate: the exec supervisor of this run is gone/);
  await waitFor(() => started.every((x) => !running(x.pid)) || undefined, 'the command and what it started to end');
  const earlier = named(await jobs(r), 'sleep 313');
  assert.ok(earlier && running(earlier.pid), "the earlier command's job lives on");
});

test("the holder (pid 1 of the session sandbox) is out of the jobs' reach: its /proc files cannot be opened", { timeout: 60_000 }, async () => {
  const r = await rig();
  const g = await gateSh(
    r,
    'cat /proc/1/cmdline | tr "\\0" " "; echo; ls /proc/1/root/ 2>&1 | head -1; cat /proc/1/environ 2>&1 | head -1; ls /proc/1/cwd/ 2>&1 | head -1; ' +
      'cat /proc/1/fd/3 2>&1 | head -1',
  );
  // it holds the sandbox's mounts (its descriptor 3), which nothing in the sandbox can open either
  assert.match(g.stdout, /^\S*gate-session --net --mounts \S*bwrap .* -- \n/);
  assert.match(g.stdout, /cat: \/proc\/1\/fd\/3: Permission denied\n/);
  assert.match(g.stdout, /ls: cannot access '\/proc\/1\/root\/': Permission denied\n/);
  assert.match(g.stdout, /cat: \/proc\/1\/environ: Permission denied\n/);
  assert.match(g.stdout, /ls: cannot access '\/proc\/1\/cwd\/': Permission denied\n/);
});

test('the daemon killed (SIGKILL): its session sandboxes and their jobs die with it', { timeout: 60_000 }, async () => {
  const r = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: 'workspace-write' } }));
  try {
    await gateSh(r, 'sleep 302 > /dev/null 2>&1 &');
    const j = await waitFor(async () => (await jobs(r)).find((x) => x.argv.join(' ') === 'sleep 302'), 'the job');
    await r.kill();
    await waitFor(() => !running(j.pid) || undefined, 'the job to end with the daemon');
  } finally {
    await r.close();
  }
});

/** What a command sees of its sandbox: its mount namespace, capabilities, no_new_privs, cwd, session. */
const SELF =
  'readlink /proc/self/ns/mnt; grep -E "^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status | tr -d "\\t"; echo "pwd=$PWD $(pwd)"; ' +
  'echo "leader=$(( $(ps -o sid= -p $$) == $$ ))"; ps -e -o comm= | sort | tr "\\n" " "; echo';

for (const entry of ['native', 'node'] as const) {
  test(`${entry}: ${entry === 'node' ? "each command builds its own mounts (a holder holds only the mounts of a plan the daemon made), confined the same" : "the sandbox's mounts are built once and held: each command enters them without bubblewrap, as bubblewrap would have started it"}`, {
    timeout: 60_000,
  }, async () => {
    const r = await rig();
    const env: Record<string, string> = entry === 'node' ? { GATE_SH_NODE: '1' } : {};
    // an empty .git (no repository yet: read-only as a whole); a missing one gets no placeholder any more
    mkdirSync(join(r.ws, '.git'), { recursive: true });
    // the job keeps this command's mount namespace alive, so a later one with the same number is this one
    const a = await gateSh(r, `sleep 30 > /dev/null 2>&1 & ${SELF}; touch made-here && echo wrote-ws; touch /etc/gate-held 2>&1; touch .git/x 2>&1; true`, {
      env,
    });
    assert.equal(a.code, 0, a.stderr);
    const b = await gateSh(r, SELF, { env });
    const mnt = (o: string): string => o.split('\n')[0];
    const host = readlinkSync('/proc/self/ns/mnt');
    assert.match(mnt(a.stdout), /^mnt:\[\d+\]$/);
    if (entry === 'node') {
      // the Node gate-sh builds its plan itself, and a holder holds only mounts of a plan the daemon made
      // (issue 28: a request never names what a holder runs or mounts): each of its commands builds its
      // own mounts, in the session sandbox's pid and network namespaces, confined the same
      assert.notEqual(mnt(b.stdout), mnt(a.stdout));
      assert.notEqual(mnt(a.stdout), host);
      assert.match(a.stdout, /wrote-ws\ntouch: cannot touch '\/etc\/gate-held': Read-only file system\ntouch: cannot touch '\.git\/x': Read-only file system\n$/);
      assert.ok(!existsSync(join(r.ws, '.git', 'x')));
      const st = await run(process.execPath, [GATE, 'status'], { env: r.env, cwd: r.ws });
      assert.match(st.stdout, /^ {2}[0-9a-f]{12} {2}holder pid \d+, network loopback only, mounts per command, \d+ process\(es\)$/m, st.stdout);
      return;
    }
    // each command enters the held mounts in a mount namespace of its own (a slave copy of them, where its
    // run's client folder is bound: issue 28), never the host's; that they are the held ones (no bubblewrap)
    // shows below: an empty bounding set, no bwrap among the processes, `mounts held`, one holder made
    assert.notEqual(mnt(b.stdout), mnt(a.stdout));
    assert.notEqual(mnt(a.stdout), host);
    assert.notEqual(mnt(b.stdout), host);
    assert.equal(readFileSync(r.paths.auditLog, 'utf8').split('session sandbox ').filter((x) => / made: holder pid/.test(x.slice(0, 40))).length, 1);
    for (const o of [a.stdout, b.stdout]) {
      // bubblewrap's --cap-drop ALL as root (and no bounding set: nothing an exec could regain), its
      // no_new_privs, --chdir (and PWD), --new-session
      assert.match(o, /CapPrm:0000000000000000\nCapEff:0000000000000000\nCapBnd:0000000000000000\nCapAmb:0000000000000000\nNoNewPrivs:1\n/);
      assert.ok(o.includes(`pwd=${r.ws} ${r.ws}\n`), o);
      assert.match(o, /leader=1\n/);
      // the pid namespace's own /proc: the holder, the command and its pipeline (and the first one's job),
      // no bubblewrap or launcher, nothing of the host (its init, kernel threads, the daemon)
      const procs = o.split('\n')[8].split(' ').filter(Boolean);
      assert.ok(procs.includes('gate-session') && procs.includes('sleep') && procs.length < 10, o);
      assert.deepEqual(procs.filter((c) => /^(bwrap|gate-launch|node|kthreadd|process_api|systemd|init)$/.test(c)), [], o);
    }
    assert.match(a.stdout, /wrote-ws\ntouch: cannot touch '\/etc\/gate-held': Read-only file system\ntouch: cannot touch '\.git\/x': Read-only file system\n$/);
    assert.ok(existsSync(join(r.ws, 'made-here')));
    assert.ok(!existsSync(join(r.ws, '.git', 'x')));
    const st = await run(process.execPath, [GATE, 'status'], { env: r.env, cwd: r.ws });
    assert.match(st.stdout, /^ {2}[0-9a-f]{12} {2}holder pid \d+, network loopback only, mounts held, \d+ process\(es\)$/m, st.stdout);
  });
}

test("a protected folder removed and made again on the host: the held mounts no longer hold it read-only, so that command builds its own, and the holder builds them again for the next", {
  timeout: 60_000,
}, async () => {
  const r = await rig();
  mkdirSync(join(r.ws, '.git'), { recursive: true });
  // CapBnd tells the two ways apart: entering the held mounts empties the bounding set, bubblewrap leaves it
  const probe = (what: string): Promise<{ stdout: string; code: number | null; stderr: string }> =>
    gateSh(r, `readlink /proc/self/ns/mnt; grep '^CapBnd' /proc/self/status | tr -d '\\t'; touch .git/${what} 2>&1 || true; ls /proc/1/ns >/dev/null && echo joined`);
  const held = /^mnt:\[\d+\]\nCapBnd:0000000000000000\n/;
  const first = await probe('a');
  assert.match(first.stdout, held);
  assert.match(first.stdout, /touch: cannot touch '\.git\/a': Read-only file system\njoined\n$/);
  // the kernel detaches the sandbox's read-only mount of the removed folder: the new one would be writable
  rmSync(join(r.ws, '.git'), { recursive: true });
  mkdirSync(join(r.ws, '.git'));
  const after = await probe('b');
  assert.equal(after.code, 0, after.stderr);
  // (each command has a mount namespace of its own either way: the empty bounding set tells them apart)
  assert.doesNotMatch(after.stdout, held, 'built by bubblewrap');
  assert.match(after.stdout, /touch: cannot touch '\.git\/b': Read-only file system\njoined\n$/);
  // told by that command, the holder looked, and built the mounts again: the next command enters them
  await waitFor(() => readFileSync(r.paths.auditLog, 'utf8').includes('its mounts changed on the host; built again') || undefined, 'the rebuild');
  const next = await probe('c');
  assert.match(next.stdout, held);
  assert.match(next.stdout, /touch: cannot touch '\.git\/c': Read-only file system\njoined\n$/);
  for (const f of ['a', 'b', 'c']) assert.ok(!existsSync(join(r.ws, '.git', f)));
});

test('GATE_SESSION_SANDBOX=off: a sandbox of its own per command, as before (its jobs end with it)', { timeout: 60_000 }, async () => {
  const PORT = port++;
  const r = await rig();
  const env = { GATE_SESSION_SANDBOX: 'off' };
  assert.equal((await gateSh(r, serve(PORT), { env })).stdout, 'started\n');
  assert.equal((await gateSh(r, curl(PORT), { env })).stdout, '000\nunreachable\n');
  assert.deepEqual(await jobs(r), []);
});

