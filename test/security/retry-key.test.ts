/**
 * Issue 28, principle 2 (no run can touch another's replies): the request channel handles a request id once,
 * and took any later message with that id for its retry. Ids are pid, time and a counter (a C client's reply
 * socket is even named by its id), so a process of run B that sent its own request first under the id
 * run A was about to use had A's request taken for B's retry: A was answered with B's answer (here B's
 * approved `make` escalation, for A's forbidden `rm`), and B got nothing. Now a retry is recognised by its
 * bytes and the client folder it came from (src/transport/server.ts, retryKey): A's request is A's own,
 * denied, and B gets its answer. Real daemon, real approval console, datagrams from each run's client folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { killAll, startDaemon } from '../helpers/daemon.js';
import { approveConsole, runShell } from '../daemon/helpers.js';
import { RequestClient } from '../../src/transport/client.js';
import { runClientDir } from '../../src/paths/paths.js';

test("a request sent first under another run's request id gets neither that run's answer nor gives it its own", { timeout: 60_000 }, async (t) => {
  const rig = await startDaemon({
    rules: ['prefix_rule(pattern=["make"], decision="prompt")', 'prefix_rule(pattern=["rm"], decision="forbidden")'],
    config: 'sandbox_mode = "workspace-write"\n',
    env: { GATE_APPROVAL_TIMEOUT_MS: '30000' },
  });
  const shell = runShell();
  // the datagram client's waits hold no reference on the event loop (a CLI exits when it is done)
  const alive = setInterval(() => {}, 1000);
  t.after(() => clearInterval(alive));
  const host = RequestClient.open(rig.paths);
  const opened: RequestClient[] = [host];
  t.after(async () => (opened.forEach((c) => c.close()), shell.stop(), killAll(), await rig.close()));
  const preflight = async (): Promise<string> => {
    const r: any = await host.request({ type: 'preflight', shell: 'bash', flag: '-c', script: 'true', cwd: '/tmp', pid: process.pid, sandbox_permissions: 'use_default' });
    assert.equal(r.type, 'preflight', JSON.stringify(r));
    return r.run_id as string;
  };
  const runA = await preflight();
  const runB = await preflight();
  // a client in each run's own client folder (where that run's sandbox binds its reply sockets)
  const inFolder = (runId: string): RequestClient => {
    const before = process.env.GATE_CLIENT_DIR;
    process.env.GATE_CLIENT_DIR = runClientDir(rig.paths, runId);
    try {
      const c = RequestClient.open(rig.paths);
      opened.push(c);
      assert.ok(c.replyPath.startsWith(`${process.env.GATE_CLIENT_DIR}/`), c.replyPath);
      return c;
    } finally {
      if (before === undefined) delete process.env.GATE_CLIENT_DIR;
      else process.env.GATE_CLIENT_DIR = before;
    }
  };
  const a = inFolder(runA);
  const b = inFolder(runB);
  // (ended by killAll, with the daemon)
  const person = await approveConsole(rig.env, 'person');
  const id = 'guessed-id-1';
  const exec = (c: RequestClient, runId: string, argv: string[]): Promise<any> =>
    c.request({ id, type: 'exec', run_id: runId, program: `/usr/bin/${argv[0]}`, argv, cwd: '/tmp', pid: 4242, host_pid: shell.pid }, { timeoutMs: 5_000, retries: 0 });
  // B sends first, under the id A is about to use: its make waits for the person
  const fromB = exec(b, runB, ['make']).catch((e: Error) => e);
  const prompt = await person.next('prompt');
  // A's forbidden rm, by the same id, from A's folder
  const fromA = exec(a, runA, ['rm', '-rf', 'x']).catch((e: Error) => e);
  // the person approves B's make, while A's request may still wait (before: A's was taken for B's retry)
  const raced = await Promise.race([fromA, new Promise((r) => setTimeout(r, 500, 'waiting'))]);
  person.answer(prompt.approval_id, 'approved');
  const ra = await fromA;
  assert.equal(ra.action?.type, 'Deny', `A's rm is answered for itself, not with B's answer (${raced === 'waiting' ? 'it waited' : 'at once'}): ${JSON.stringify(ra)}`);
  assert.match(ra.action.reason, /forbidden/);
  // (a pending request waits as long as the daemon answers pings: bounded here)
  const rb: any = await Promise.race([fromB, new Promise((r) => setTimeout(r, 10_000, new Error('no answer in 10 s')))]);
  assert.notEqual(rb.action?.type ?? 'none', 'Deny', `B's make gets its own approved answer: ${rb instanceof Error ? rb.message : JSON.stringify(rb)}`);
  assert.equal(rb.action?.type, 'Escalate', JSON.stringify(rb));
  // a real retry (the same bytes, from the same folder) is still answered once, from what the daemon kept
  const again: any = await a.request({ id: 'retry-2', type: 'exec', run_id: runA, program: '/usr/bin/ls', argv: ['ls'], cwd: '/tmp', pid: 4242, host_pid: shell.pid });
  assert.equal(again.action?.type, 'Run', JSON.stringify(again));
  const msg = { id: 'retry-3', type: 'exec', run_id: runA, program: '/usr/bin/ls', argv: ['ls', '-l'], cwd: '/tmp', pid: 4242, host_pid: shell.pid };
  assert.ok(a.notify(msg));
  assert.equal(((await a.request(msg)) as any).action?.type, 'Run');
  await assert.rejects(a.request(msg, { timeoutMs: 300, retries: 0 }), /did not answer/, 'answered once: the retry of an answered id is not handled again');
});
