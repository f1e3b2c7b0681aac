/**
 * The native gate-sh (shims/gate-sh-native.c, bin/gate-sh) and the Node gate-sh (bin/gate-sh-node) run the
 * same cases against the same real daemon, in danger-full-access and in workspace-write (bubblewrap): bash's
 * own argv, its environment, stdout, stderr and the exit status are the same bytes. The daemon builds both
 * plans from one set of builders (src/exec/client-plan.ts), so a difference here is a drift in a client.
 * The third entry point, `gate mcp`'s runner (a call in the server's own process: src/integrations/
 * shell-plan.ts), runs the cases a `shell` tool call can be (escalation flags, -c|-lc, a script) beside
 * both: its one output is both streams in arrival order, so the two gate-sh's run with stdout and stderr on
 * one pipe, and each case writes to one stream only (two pipes read by one process have no fixed order).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { gateNative } from '../../src/exec/native.js';
import { callDir, runsInProcess, startPlannedCall } from '../../src/integrations/shell-plan.js';
import { GATE_SH_NODE, ROOT } from '../helpers/env.js';
import { run, type Ran } from './helpers.js';
import { daemonForTest } from '../helpers/daemon.js';

const NATIVE = join(ROOT, 'bin', 'gate-sh');

/** bash's argv (NUL-separated in /proc) and its environment without the per-run id, sorted */
// GATE_RUN, GATE_CLIENT_DIR (the run's own client folder) and GATE_KERNEL_SOCK (the kernel layer's supervisor
// socket) are new for every run
const PROBE =
  `tr '\\0' '\\n' < /proc/$$/cmdline; echo ---; env | grep -v '^GATE_RUN=' | grep -v '^GATE_CLIENT_DIR=' | grep -v '^GATE_KERNEL_SOCK=' | grep -v '^_=' | sort`;

interface Case {
  args: string[];
  input?: string;
}

const CASES: Case[] = [
  { args: ['-c', PROBE] },
  { args: ['-lc', PROBE, 'name', 'a b', 'c'] },
  { args: ['-e', '-o', 'pipefail', '-c', 'echo "$0:$1"; false; echo not reached', 'n', 'one'] },
  { args: ['-x', '-c', 'echo traced; echo err >&2; exit 7'] },
  { args: ['--norc', '--noprofile', '-c', 'printf "%s|" "$@"; echo', 'n', '', '*', "it's"] },
  { args: ['./s.sh', 'arg1'] },
  { args: ['-s', 'x', 'y'], input: 'echo "stdin $0 $1 $2"; cat; exit 3\n' },
  { args: [], input: 'echo piped; kill -TERM $$\n' },
  { args: ['-c', 'echo ünïcödé ✓; printf "\\x00\\x01\\xff" | od -An -tx1'] },
  { args: ['-c', 'rm -rf /'] }, // denied: nothing runs, the same message and 126
  { args: ['-c', 'for f in *.sh; do wc -l "$f"; done; cat s.sh | head -1; git status 2>&1 | head -1'] },
];

function same(a: Ran, b: Ran, what: string): void {
  assert.equal(a.code, b.code, `${what}: exit code (native ${a.code}, node ${b.code}); stderr native ${a.stderr} node ${b.stderr}`);
  assert.equal(a.signal, b.signal, `${what}: signal`);
  assert.equal(a.stdout.toString('latin1'), b.stdout.toString('latin1'), `${what}: stdout`);
  assert.equal(a.stderr.toString('latin1'), b.stderr.toString('latin1'), `${what}: stderr`);
}

for (const mode of ['danger-full-access', 'workspace-write'] as const) {
  test(`native and Node gate-sh: same argv, environment, output and status (${mode})`, { timeout: 120_000 }, async (t) => {
    const { te, ws } = await daemonForTest(t, {
      config: `sandbox_mode = "${mode}"\napproval_policy = "on-request"\n`,
      workspace: 'ws',
      env: { GATE_NO_AUTOSTART: '1' },
    });
    writeFileSync(join(ws, 's.sh'), 'echo "file $0 $1"\n');
    mkdirSync(join(ws, 'd'));
    for (const c of CASES) {
      // the same $0 for both: the native client passes its name on to Node when it hands over
      const o = { env: te.env, cwd: ws, input: c.input ?? '' };
      const native = await run(NATIVE, c.args, o);
      const node = await run(GATE_SH_NODE, c.args, { ...o, argv0: NATIVE, env: { ...te.env, GATE_SH_ARGV0: NATIVE } });
      same(native, node, `${mode} ${JSON.stringify(c.args)}`);
    }
    // the probe really looked at bash: its argv and the exec gate's variables are in the output
    const probe = await run(NATIVE, ['-c', PROBE], { env: te.env, cwd: ws });
    assert.match(probe.stdout.toString(), /^\/bin\/bash\n-c\n/);
    assert.match(probe.stdout.toString(), /^LD_PRELOAD=.*libgate\.so/m);
  });
}

test('GATE_SH_NODE=1 makes the native entry point hand over to Node before anything runs', { timeout: 60_000 }, async (t) => {
  const { te, ws } = await daemonForTest(t, { config: 'sandbox_mode = "danger-full-access"\n', workspace: 'ws', env: { GATE_NO_AUTOSTART: '1' } });
  // gate-sh is the parent of the kernel layer's launcher, whose supervisor is bash's parent (docs/exec-gate.md)
  const starter = 'p=$(cut -d" " -f4 /proc/$PPID/stat); p=$(cut -d" " -f4 /proc/$p/stat); tr "\\0" " " < /proc/$p/cmdline';
  const r = await run(NATIVE, ['-c', `echo $0; ${starter}`], { env: { ...te.env, GATE_SH_NODE: '1' }, cwd: ws });
  assert.equal(r.code, 0, r.stderr.toString());
  assert.match(r.stdout.toString(), new RegExp(`^${NATIVE}\\n.*node .*bin/gate-sh-node -c`));
  const n = await run(NATIVE, ['-c', starter], { env: te.env, cwd: ws });
  assert.doesNotMatch(n.stdout.toString(), /node/);
});

/** The cases a `shell` tool call can be: `gate mcp` passes [escalation flags..., -c|-lc, command]. */
const CALL_CASES: string[][] = [
  ['-c', PROBE],
  ['-lc', PROBE],
  ['-c', 'echo ünïcödé ✓; printf "\\x00\\x01\\xff" | od -An -tx1'],
  ['-c', 'rm -rf /'], // denied: nothing runs, the same message and 126
  ['-c', 'for f in *.sh; do wc -l "$f"; done; cat s.sh | head -1; git status 2>&1 | head -1'],
  ['-lc', 'echo only on stderr >&2; exit 3'],
  ['-c', 'kill -TERM $$'],
  ['--with-permissions', '{"bogus":1}', '-c', 'true'], // flags the daemon cannot read: exit 2, what is wrong
];

/** The start-up phase's hand-over at the head of bash's script (src/exec/start-up-gate.ts), whatever its descriptors. */
const HAND_OVER = /builtin printf \. >&\d+; builtin read -r -N 1 -u \d+ __gate_go \|\| builtin exit 126; builtin unset __gate_go; command exec \d+>&- \d+<&-;/g;

interface Merged {
  code: number | null;
  output: Buffer;
}

/** A gate-sh with stdout and stderr on one pipe (as `2>&1` into a pipe): the bytes in the order written. */
function runMerged(program: string, args: string[], o: { env: Record<string, string>; cwd: string; argv0?: string }): Promise<Merged> {
  const [r, w] = gateNative().pipe();
  return new Promise((resolve, reject) => {
    let c: ReturnType<typeof spawn>;
    try {
      c = spawn(program, args, { env: o.env, cwd: o.cwd, argv0: o.argv0, stdio: ['ignore', w, w] });
    } finally {
      closeSync(w);
    }
    const out: Buffer[] = [];
    const pipe = new Socket({ fd: r, readable: true, writable: false });
    pipe.on('data', (d: Buffer) => out.push(d));
    const closed = new Promise<void>((done) => pipe.once('close', () => done()));
    c.on('error', reject);
    // a gate-sh that ended by a signal (as its bash did: `kill -TERM $$`) has the status bash reports for it,
    // 128+n, which is what the mcp runner's call gives as its exit code
    c.on('exit', (code, signal) => {
      const status = code ?? 128 + (signal ? osConstants.signals[signal] : 0);
      void closed.then(() => resolve({ code: status, output: Buffer.concat(out) }));
    });
  });
}

/** The call as `gate mcp` runs it in its own process (shell-run.ts startShell's in-process engine). */
async function viaMcp(args: string[], env: Record<string, string>, cwd: string): Promise<Merged> {
  const login = args.includes('-lc');
  const script = args[args.indexOf(login ? '-lc' : '-c') + 1];
  assert.ok(runsInProcess(env, script), 'the call runs in the server\'s process');
  const out: Buffer[] = [];
  const call = startPlannedCall({
    argv: args,
    script,
    login,
    cwd: callDir(cwd),
    env,
    gateSh: NATIVE,
    shimsDir: join(ROOT, 'shims'),
    output: (b) => out.push(b),
    autostart: async () => {
      throw new Error('the test daemon runs already');
    },
  });
  try {
    return { code: await call.done, output: Buffer.concat(out) };
  } finally {
    call.kill(); // what the script left behind, as startShell does
  }
}

for (const mode of ['danger-full-access', 'workspace-write'] as const) {
  test(`native gate-sh, Node gate-sh and gate mcp's runner: same output and status per call (${mode})`, { timeout: 120_000 }, async (t) => {
    const { te, ws } = await daemonForTest(t, {
      config: `sandbox_mode = "${mode}"\napproval_policy = "on-request"\n`,
      workspace: 'ws',
      env: { GATE_NO_AUTOSTART: '1' },
    });
    writeFileSync(join(ws, 's.sh'), 'echo "file $0 $1"\n');
    for (const args of CALL_CASES) {
      const what = `${mode} ${JSON.stringify(args)}`;
      const native = await runMerged(NATIVE, args, { env: te.env, cwd: ws });
      const node = await runMerged(GATE_SH_NODE, args, { env: { ...te.env, GATE_SH_ARGV0: NATIVE }, cwd: ws, argv0: NATIVE });
      const mcp = await viaMcp(args, te.env, ws);
      for (const [name, other] of [['node', node], ['mcp', mcp]] as const) {
        assert.equal(other.code, native.code, `${what}: exit code (native ${native.code}, ${name} ${other.code}); native ${native.output} ${name} ${other.output}`);
        // the start-up phase's descriptors are the first free numbers after those the client passes on: a
        // gate-sh passes on what it inherited (here the test runner's), the server none of its own
        const text = (m: Merged) => m.output.toString('latin1').replace(name === 'mcp' ? HAND_OVER : /^\b$/, '<hand-over>');
        assert.equal(text(other), text(native), `${what}: output (native, ${name})`);
      }
    }
    // the cases really ran: bash's argv, a denial, a signal's status, the flags' refusal
    const probe = await viaMcp(['-c', PROBE], te.env, ws);
    assert.match(probe.output.toString(), /^\/bin\/bash\n-c\n/);
    assert.equal((await viaMcp(['-c', 'rm -rf /'], te.env, ws)).code, 126);
    assert.equal((await viaMcp(['-c', 'kill -TERM $$'], te.env, ws)).code, 143);
    assert.equal((await viaMcp(['--with-permissions', '{"bogus":1}', '-c', 'true'], te.env, ws)).code, 2);
  });
}

test('the on-failure rerun, the same through all three: a sandbox denial asked about, refused by the policy', { timeout: 60_000 }, async (t) => {
  // an approval policy that rejects escalation prompts: the rerun's question is answered at once (Deny), so no
  // person is waited for
  const { te, ws } = await daemonForTest(t, {
    config: 'sandbox_mode = "workspace-write"\napproval_policy = { reject = { sandbox_approval = true, rules = false, mcp_elicitations = false } }\n',
    workspace: 'ws',
    env: { GATE_NO_AUTOSTART: '1' },
  });
  const args = ['-c', 'echo before >&2; touch /usr/gate-parity-denied'];
  const native = await runMerged(NATIVE, args, { env: te.env, cwd: ws });
  const node = await runMerged(GATE_SH_NODE, args, { env: { ...te.env, GATE_SH_ARGV0: NATIVE }, cwd: ws, argv0: NATIVE });
  const mcp = await viaMcp(args, te.env, ws);
  assert.equal(native.code, 1, native.output.toString());
  assert.match(native.output.toString(), /^before\ntouch: .*Read-only file system\ngate-sh: the sandboxed run failed \(read-only file system in the sandbox: .*\); not rerun: /);
  for (const [name, other] of [['node', node], ['mcp', mcp]] as const) {
    assert.equal(other.code, native.code, `exit code (native ${native.code}, ${name} ${other.code}): ${other.output}`);
    assert.equal(other.output.toString(), native.output.toString(), `output (native, ${name})`);
  }
});
