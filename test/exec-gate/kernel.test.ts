/**
 * The kernel layer of the exec gate (shims/gate-launch.h and shims/launch/, docs/exec-gate.md): execs the LD_PRELOAD layer
 * cannot see — a static program, a raw syscall with the environment dropped, execveat of a descriptor,
 * a script named rm, a process that closed every descriptor — are stopped by the seccomp supervisor in
 * every sandbox mode; with rm allowed each of them runs (so the test can fail). Also: many execs, a fork
 * storm, the supervisor killed mid-run, seccomp unavailable. Real daemon, real gate-sh, real bubblewrap,
 * programs built here with gcc -static.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';
import { fourAtATime, gateSh, execGateOptions } from './helpers.js';
import { type DaemonProc, killAll, startDaemon, waitFor } from '../helpers/daemon.js';
import { counted, loadCount } from '../helpers/load.js';

/** execs in a row (npm run test:load: 10,000) */
const CHAIN = loadCount(10_000, 1_000);

const LOADER = process.arch === 'arm64' ? '/lib/ld-linux-aarch64.so.1' : '/lib64/ld-linux-x86-64.so.2';
const PROGRAMS = ['static-exec', 'static-execveat', 'chain', 'closefds', 'storm'];
let bin = '';

before(() => {
  bin = mkdtempSync(join(tmpdir(), 'gate-kernel-bin-'));
  for (const p of PROGRAMS)
    execFileSync('gcc', ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(bin, p), join(ROOT, 'test', 'exec-gate', 'programs', `${p}.c`)]);
  process.on('exit', () => rmSync(bin, { recursive: true, force: true }));
});

const ALLOWED = ['python3', 'perl', 'node'].map((p) => `prefix_rule(pattern=["${p}"], decision="allow")`);
const FORBID_RM = ['prefix_rule(pattern=["rm"], decision="forbidden")', ...ALLOWED];
const ALLOW_RM = ['prefix_rule(pattern=["rm"], decision="allow")', ...ALLOWED];

/** [name, script]: each removes the file named by $T; $B is the folder of the test programs. */
const SPELLINGS: [string, string][] = [
  ['static program, execve with an empty environment', `"$B/static-exec" /bin/rm rm -f "$T"`],
  ['static program, execveat(fd, "", AT_EMPTY_PATH)', `"$B/static-execveat" /bin/rm rm -f "$T"`],
  [
    'python raw execve syscall, environment dropped',
    `python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); a=(ctypes.c_char_p*4)(b"rm", b"-f", sys.argv[1].encode(), None); e=(ctypes.c_char_p*1)(None); l.syscall(59, b"/bin/rm", a, e); print("execve failed")' "$T"`,
  ],
  // a #! script named rm (made by the test: see prepareCopies) that removes its argument through python
  ['static program exec of a script named rm', `"$B/static-exec" ./rm rm -f "$T"`],
  ['descriptors all closed, then execve', `"$B/closefds" /bin/rm rm -f "$T"`],
  // programs known by what they are (src/script/in-process.ts): the loader as a program, a multi-call binary
  ['the dynamic loader run as the program', `${LOADER} /bin/rm -f "$T"`],
  [
    'the dynamic loader through python os.posix_spawn',
    `python3 -c 'import os,sys; p=os.posix_spawn("${LOADER}", ["ld.so", "/bin/rm", "-f", sys.argv[1]], {}); os.waitpid(p, 0)' "$T"`,
  ],
  ['busybox rm', `busybox rm -f "$T"`],
  // a copy of the loader under another name is the loader (src/daemon/program-identity.ts)
  ['a copy of the dynamic loader run as the program', `./loader-copy /bin/rm -f "$T"`],
  // the same bytes under another name (src/daemon/program-identity.ts); the files are made before the run
  ['a copy of rm', `./copy-of-rm -f "$T"`],
  ['a hard link to rm', `./link-to-rm -f "$T"`],
  ['a renamed rm', `./renamed-rm -f "$T"`],
  [
    'a memfd holding rm, exec\'d as "ls" (python fexecve)',
    `python3 -c 'import os,sys; fd=os.memfd_create("x"); os.write(fd, open("/bin/rm","rb").read()); os.execve(fd, ["ls", "-f", sys.argv[1]], dict(os.environ))' "$T"`,
  ],
  [
    'a memfd holding rm, from a static program (execveat AT_EMPTY_PATH)',
    `python3 -c 'import os,sys; fd=os.memfd_create("x", 0); os.write(fd, open("/bin/rm","rb").read()); os.set_inheritable(fd, True); os.execv(sys.argv[2], [sys.argv[2], "/proc/self/fd/%d" % fd, "ls", "-f", sys.argv[1]])' "$T" "$B/static-execveat"`,
  ],
];

/** The copies of rm and the script named rm that the spellings above run, made in the workspace by the test
 * (a read-only run may not write). */
function prepareCopies(work: string): void {
  copyFileSync('/bin/rm', join(work, 'copy-of-rm'));
  copyFileSync('/bin/rm', join(work, 'rm-original'));
  try {
    linkSync('/bin/rm', join(work, 'link-to-rm'));
  } catch {
    linkSync(join(work, 'rm-original'), join(work, 'link-to-rm')); // /bin on another file system
  }
  copyFileSync('/bin/rm', join(work, 'rm-before-rename'));
  renameSync(join(work, 'rm-before-rename'), join(work, 'renamed-rm'));
  writeFileSync(join(work, 'rm'), '#!/bin/sh\nfor a; do case $a in -*) ;; *) exec python3 -c "import os,sys; os.unlink(sys.argv[1])" "$a";; esac; done\n');
  copyFileSync(LOADER, join(work, 'loader-copy'));
  for (const f of ['copy-of-rm', 'link-to-rm', 'renamed-rm', 'rm', 'loader-copy']) chmodSync(join(work, f), 0o755);
}

const MODES = ['workspace-write', 'read-only', 'danger-full-access'] as const;

async function rigFor(mode: (typeof MODES)[number], rules: string[]): Promise<DaemonProc> {
  const rig = await startDaemon(execGateOptions({ rules, autoApprove: true, env: { GATE_SANDBOX_MODE: mode } }));
  prepareCopies(rig.ws);
  return rig;
}

async function attempt(rig: DaemonProc, i: number, tag: string) {
  const [, script] = SPELLINGS[i];
  const target = `target-${tag}-${i}`;
  writeFileSync(join(rig.ws, target), 'x');
  const r = await gateSh(rig, `T=${target}; B=${bin}; ${script}; echo "status=$?"`, { timeoutMs: 60_000 });
  return { removed: !existsSync(join(rig.ws, target)), ...r };
}

for (const mode of MODES) {
  test(`kernel layer, ${mode}: with rm forbidden no spelling the LD_PRELOAD layer cannot see runs rm; with rm allowed each does`, async (t) => {
    const forbid = await rigFor(mode, FORBID_RM);
    t.after(async () => (killAll(), forbid.close()));
    const denied = await fourAtATime(SPELLINGS.map((_, i) => () => attempt(forbid, i, 'f')));
    denied.forEach((r, i) => {
      assert.equal(r.removed, false, `${SPELLINGS[i][0]} removed its target: ${r.stderr}`);
      assert.match(r.stderr, /gate-sh: denied: [^\n]+: /, `${SPELLINGS[i][0]} (exit ${r.code}): ${r.stderr}${r.stdout}`);
    });
    const allow = await rigFor(mode, ALLOW_RM);
    t.after(async () => allow.close());
    const ran = await fourAtATime(SPELLINGS.map((_, i) => () => attempt(allow, i, 'a')));
    ran.forEach((r, i) => {
      assert.doesNotMatch(r.stderr, /gate-sh: (denied|exec gate)/, `${SPELLINGS[i][0]}: ${r.stderr}`);
      // read-only: rm runs, and the sandbox (not the gate) keeps the file — unless an allowed interpreter
      // was escalated out of the sandbox, where its rm removes it
      // (rm's own status 1 where it cannot say why: it ran with every descriptor closed)
      const ran =
        r.removed ||
        (mode === 'read-only' &&
          (/: cannot remove .*(Read-only file system|Permission denied|Operation not permitted)/.test(r.stderr) || /^status=1$/m.test(r.stdout)));
      assert.ok(ran, `${SPELLINGS[i][0]} did not run (exit ${r.code}): ${r.stderr}`);
    });
  });
}

test(`kernel layer: ${counted(CHAIN)} execs of a static program, a bounded fork storm, and an exec after closing every descriptor`, async (t) => {
  const rig = await rigFor('workspace-write', FORBID_RM);
  t.after(async () => (killAll(), rig.close()));
  const chain = await gateSh(rig, `"${bin}/chain" ${CHAIN}`, { timeoutMs: 600_000 });
  assert.equal(chain.stdout.trim(), 'chain done', chain.stderr);
  const storm = await gateSh(rig, `"${bin}/storm" 200 /bin/true true; "${bin}/storm" 50 /bin/rm rm -f storm-target`, { timeoutMs: 300_000 });
  assert.match(storm.stdout, /^ok=200 of 200\nok=0 of 50$/m, storm.stderr);
  assert.equal((storm.stderr.match(/gate-sh: denied: rm -f storm-target: /g) ?? []).length, 50);
  const closed = await gateSh(rig, `"${bin}/closefds" /bin/true true; echo rc=$?`);
  assert.match(closed.stdout, /^rc=0$/m, closed.stderr);
  // the supervisor's sockets are gone with it
  await waitFor(() => readdirSync(rig.paths.clientDir).filter((f) => /^[kd]g.*\.sock$/.test(f)).length === 0 || undefined, 'the supervisor sockets to go');
});

/** Processes whose command line starts with gate-launch and whose parent is one too: supervisors; with
 * `cwd`, only those working there (other test files and other checkouts may be running their own). */
function supervisors(cwd?: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!stat.includes('(gate-launch)') || !readFileSync(`/proc/${ppid}/stat`, 'utf8').includes('(gate-launch)')) continue;
      if (cwd === undefined || readlinkSync(`/proc/${d}/cwd`) === cwd) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test('kernel layer: the supervisor killed mid-run: the run ends with a clear error, nothing more is exec\'d, nothing hangs', async (t) => {
  const rig = await rigFor('danger-full-access', ALLOW_RM);
  // the busy loops below end only when `go` exists: write it whatever happened, before the folder goes
  t.after(async () => (writeFileSync(join(rig.ws, 'go'), ''), killAll(), rig.close()));
  writeFileSync(join(rig.ws, 'keep'), 'x');
  const ws = realpathSync(rig.ws);
  const before = new Set(supervisors(ws));
  // a background job that outlives the script's bash tries rm (allowed) after the supervisor is gone
  // (a shell started with an empty environment, so without the LD_PRELOAD layer, whose requests went through
  // the supervisor and would be refused first)
  // and a bash with the LD_PRELOAD layer, whose request the gone supervisor cannot relay
  const pending = gateSh(
    rig,
    `"${bin}/static-exec" /bin/sh sh -c 'echo > ready; while [ ! -e go ]; do :; done; /bin/rm -f keep 2> rm-error; echo "rm=$?" > after' & (trap '' HUP TERM; while [ ! -e go ]; do :; done; /bin/true 2> shim-error) & sleep 60`,
    { timeoutMs: 30_000 },
  );
  await waitFor(() => existsSync(join(rig.ws, 'ready')) || undefined, 'the run to start');
  const mine = await waitFor(() => supervisors(ws).filter((p) => !before.has(p))[0], 'the supervisor');
  process.kill(mine, 'SIGKILL');
  const r = await pending;
  assert.equal(r.code, 126, r.stderr);
  assert.match(r.stderr, /gate-sh: exec gate: the exec supervisor of this run is gone/);
  writeFileSync(join(rig.ws, 'go'), '');
  // (the shell makes the file before it writes the line: wait for the line)
  const tried = () => existsSync(join(rig.ws, 'after')) && readFileSync(join(rig.ws, 'after'), 'utf8').endsWith('\n');
  await waitFor(() => tried() || undefined, 'the background job to try rm');
  assert.ok(existsSync(join(rig.ws, 'keep')), 'rm ran without a supervisor');
  assert.match(readFileSync(join(rig.ws, 'after'), 'utf8'), /rm=12[67]/);
  // with its listener gone the kernel fails the notifying execve with ENOSYS
  assert.match(readFileSync(join(rig.ws, 'rm-error'), 'utf8'), /Function not implemented/);
  await waitFor(
    () => readFileSync(join(rig.ws, 'shim-error'), { encoding: 'utf8', flag: 'a+' }).includes('supervisor') || undefined,
    'the LD_PRELOAD layer to fail closed',
  );
  assert.match(readFileSync(join(rig.ws, 'shim-error'), 'utf8'), /gate-sh: exec gate: \/bin\/true: the exec supervisor of this run is gone/);
});

test('kernel layer: seccomp user notification unavailable: nothing runs, exit 126, a message that says why', async (t) => {
  const rig = await rigFor('workspace-write', ALLOW_RM);
  t.after(async () => (killAll(), rig.close()));
  const r = await gateSh(rig, 'touch made', { env: { GATE_TEST_SECCOMP: 'unavailable' } });
  assert.equal(r.code, 126);
  assert.match(r.stderr, /gate-sh: exec gate: .*not run: the kernel refused the exec filter \(seccomp user notification\)/);
  assert.equal(existsSync(join(rig.ws, 'made')), false);
  const ok = await gateSh(rig, 'touch made');
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(existsSync(join(rig.ws, 'made')));
});
