/**
 * The native gate-sh (shims/gate-sh-native.c, bin/gate-sh) and the Node gate-sh (bin/gate-sh-node) run the
 * same cases against the same real daemon, in danger-full-access and in workspace-write (bubblewrap): bash's
 * own argv, its environment, stdout, stderr and the exit status are the same bytes. The daemon builds both
 * plans from one set of builders (src/exec/client-plan.ts), so a difference here is a drift in a client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
