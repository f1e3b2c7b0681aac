/**
 * Issue 28, principle 2 (a run's requests bound to it): the kernel layer's report of an exec carries
 * `pair_run`, the run named by the exec'ing process's own GATE_RUN, which the process chose. The daemon
 * answered such a report from the answers kept for that run's LD_PRELOAD-layer requests (exec-pairs.ts)
 * whatever sandbox the report came from, so a process of run B that set GATE_RUN to run A's id (in the audit
 * log) and exec'd with the inputs of A's just-approved exec ran it with no prompt. Now pair_run counts only
 * for the supervisor's own run and the runs of its sandbox and tree (a nested gate-sh's run, which replies
 * in its enclosing run's client folder: src/daemon/daemon.ts, pairBound).
 * Real daemon and approval console; the requests are the bytes a supervisor and the LD_PRELOAD layer send
 * (an argv over a datagram's size: the layer asks over stream.sock, the only requests the daemon pairs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { GATE } from '../helpers/env.js';
import { killAll, startDaemon, track, waitFor, type DaemonProc } from '../helpers/daemon.js';
import { runShell } from '../daemon/helpers.js';
import { RequestClient } from '../../src/transport/client.js';

/** A person approving every prompt, who then leaves. */
async function approver(rig: DaemonProc): Promise<{ leave(): Promise<void>; asked: number }> {
  const a = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'person'], { env: rig.env, stdio: ['pipe', 'pipe', 'ignore'] }));
  const box = { asked: 0, leave: async () => (a.kill('SIGTERM'), await gone) };
  let attached = false;
  const gone = new Promise<void>((r) => a.once('exit', () => r()));
  createInterface({ input: a.stdout! }).on('line', (l) => {
    const e = JSON.parse(l) as { type: string; approval_id?: string };
    if (e.type === 'attached') attached = true;
    if (e.type !== 'prompt') return;
    box.asked++;
    a.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: 'approved' }) + '\n');
  });
  await waitFor(() => attached, 'the approver to attach');
  return box;
}

test("a kernel-layer report naming another sandbox's run (pair_run) gets none of that run's kept answers", { timeout: 60_000 }, async (t) => {
  const rig = await startDaemon({
    rules: ['prefix_rule(pattern=["make"], decision="prompt")'],
    config: 'sandbox_mode = "workspace-write"\n',
    env: { GATE_APPROVAL_TIMEOUT_MS: '1500' },
  });
  const shell = runShell();
  const c = RequestClient.open(rig.paths);
  t.after(async () => (c.close(), shell.stop(), killAll(), await rig.close()));
  const preflight = async (extra: Record<string, unknown> = {}): Promise<string> => {
    const r: any = await c.request({ type: 'preflight', shell: 'bash', flag: '-c', script: 'true', cwd: '/tmp', pid: process.pid, sandbox_permissions: 'use_default', ...extra });
    assert.equal(r.type, 'preflight', JSON.stringify(r));
    return r.run_id as string;
  };
  // A and B: two gated scripts, each in a sandbox (and client folder) of its own; N: a nested gate-sh's run in A's
  const runA = await preflight();
  const runB = await preflight();
  const runN = await preflight({ parent_run: runA });
  // over a datagram's size: the LD_PRELOAD layer asks over stream.sock, and the daemon keeps its Run for the kernel's report
  const big = 'x'.repeat(70_000);
  const exec = (runId: string, arg: string, kernel?: { pair_run: string }): Promise<any> =>
    c.request(
      { type: 'exec', run_id: runId, program: '/usr/bin/make', argv: ['make', arg, big], cwd: '/tmp', pid: 4242, host_pid: shell.pid, ...(kernel ? { layer: 'kernel', ...kernel } : {}) },
      { timeoutMs: 20_000 },
    );
  const person = await approver(rig);
  // A's and N's own execs of make, approved by the person: answered, and kept for the kernel layer's report
  for (const [runId, arg] of [
    [runA, 'a'],
    [runN, 'n'],
  ]) {
    const r = await exec(runId, arg);
    assert.notEqual(r.action?.type, 'Deny', `the approved make of ${arg}: ${JSON.stringify(r)}`);
  }
  assert.equal(person.asked, 2);
  await person.leave();
  // B's supervisor reports an exec of a process of B that set GATE_RUN to A's (or N's) id, with the same inputs:
  // decided under B, where nobody approves make (before: answered Run from A's kept answer, no prompt)
  for (const [pairRun, arg] of [
    [runA, 'a'],
    [runN, 'n'],
  ]) {
    const r = await exec(runB, arg, { pair_run: pairRun });
    assert.equal(r.action?.type, 'Deny', `B's report naming ${arg === 'a' ? 'A' : 'N'}: ${JSON.stringify(r)}`);
  }
  // A's own supervisor reports the same execs (its own run, and the nested run of its sandbox): answered from
  // what was kept, nobody asked again (nobody is attached: a decision would be a denial)
  for (const [pairRun, arg] of [
    [runA, 'a'],
    [runN, 'n'],
  ]) {
    const r = await exec(runA, arg, { pair_run: pairRun });
    assert.equal(r.action?.type, 'Run', `A's report of ${arg}: ${JSON.stringify(r)}`);
  }
});
