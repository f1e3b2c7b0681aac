import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ARG_SCRIPT, planRun } from '../../../src/exec/plan.js';
import { parseShellArgs } from '../../../src/exec/gate-sh-args.js';
import { join } from 'node:path';
import { SHIMS_DIR } from '../../../src/exec/exec-gate.js';

const reply = { run_id: 'run-42', sandbox: { type: 'danger-full-access' } as const };
const base = { reply, env: { HOME: '/h', UNSET: undefined }, cwd: '/w', bash: '/bin/bash' };

/** Every gated run starts under the kernel layer's launcher (issue 16): gate-launch BASH ARGS. What bash
 * gets is the launcher's arguments after bash itself. */
function bashArgs(p: { program: string; args: string[] }): string[] {
  assert.equal(p.program, join(SHIMS_DIR, 'gate-launch'));
  assert.equal(p.args[0], '/bin/bash');
  return p.args.slice(1);
}

test('small script: bash [opts] -c SCRIPT NAME ARGS, GATE_RUN in the env, caller env kept', () => {
  const p = planRun({ ...base, invocation: parseShellArgs(['-elc', 'echo hi', 'n', 'a'], 'gate-sh'), script: 'echo hi' });
  assert.deepEqual(bashArgs(p), ['-l', '-e', '-c', 'echo hi', 'n', 'a']);
  // later steps (exec gate, sandbox) may add variables; the caller's stay and the run id is there
  assert.equal(p.env.HOME, '/h');
  assert.equal(p.env.GATE_RUN, 'run-42');
  assert.equal('UNSET' in p.env, false);
  assert.equal(p.cwd, '/w');
  assert.equal(p.scriptFd, undefined);
});

test('script file and stdin scripts run the checked text with $0 set', () => {
  const f = planRun({ ...base, invocation: parseShellArgs(['./s.sh', 'x'], 'gate-sh'), script: 'echo $0' });
  assert.deepEqual(bashArgs(f), ['-c', 'echo $0', './s.sh', 'x']);
  const s = planRun({ ...base, invocation: parseShellArgs(['-s', 'a'], '/bin/gate-sh'), script: 'echo' });
  assert.deepEqual(bashArgs(s), ['-c', 'echo', '/bin/gate-sh', 'a']);
});

test('over 128 KiB: the script goes by descriptor, above the inherited ones; -x moves after the prelude', () => {
  const big = 'echo x\n' + '#'.repeat(MAX_ARG_SCRIPT);
  const p = planRun({ ...base, invocation: parseShellArgs(['-x', '-e', '-o', 'xtrace', '-c', big, "it's"], 'gate-sh'), script: big, inheritedFds: [3, 7] });
  assert.deepEqual(p.scriptFd?.fd, 8);
  assert.deepEqual(bashArgs(p), ['-e', '/dev/fd/8']);
  const text = p.scriptFd!.data.toString();
  // shell source through src/text/shell-words.ts (issue 32: one quoting function): bash reads $0 back as it's
  assert.ok(text.startsWith(`exec 8<&-; BASH_ARGV0="it's"; set -x -o xtrace; echo x\n`), text.slice(0, 80));
  assert.deepEqual(p.fds, [3, 7]);
  // exactly at the limit still fits argv
  const edge = 'a'.repeat(MAX_ARG_SCRIPT);
  assert.equal(planRun({ ...base, invocation: parseShellArgs(['-c', edge], 'g'), script: edge }).scriptFd, undefined);
});
