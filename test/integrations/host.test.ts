/**
 * `gate host` (JSON-RPC 2.0 over stdio, and over the host socket) driven by the test as a host: approval
 * requests with Codex's fields answered accept / acceptWithExecpolicyAmendment / decline / garbage / error,
 * policy updates, JSON-RPC errors. Real daemon, real gate-sh runs.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { gateSh } from '../shell/helpers.js';
import { hostProcess, rpcDriver } from './helpers.js';
import { tempEnv } from '../helpers/env.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

const RULES = `prefix_rule(pattern=["touch"], decision="prompt", justification="creates files")\n`;
const isApproval = (m: Record<string, any>) => m.method === 'item/commandExecution/requestApproval';

test('gate host: approvals as JSON-RPC requests, every answer form, policy methods, errors, the socket', { timeout: 180_000 }, async () => {
  const te = tempEnv();
  const w = join(te.dir, 'w');
  mkdirSync(w);
  const d = await startDaemon({ te, rulesFile: 'team.rules', rules: RULES, args: ['--approval-policy', 'on-request'] });
  const h = hostProcess(te.env, ['--name', 'ide']);
  const run = (script: string) => gateSh(['-c', script], { env: te.env, cwd: w });
  let s: ReturnType<typeof hostProcess> | undefined;
  try {
    const init = await h.call('initialize', {});
    assert.equal(init.result.serverInfo.name, 'gate-sh');
    assert.equal(init.result.approver, 'ide');

    // accept: the request carries Codex's fields
    let ran = run('touch a');
    let req = await h.next(isApproval, 'an approval request');
    assert.equal(req.jsonrpc, '2.0');
    assert.equal(req.params.command, 'touch a');
    assert.deepEqual(req.params.commandArgv, ['touch', 'a']);
    assert.equal(req.params.cwd, w);
    assert.match(req.params.reason, /creates files/);
    assert.equal(req.params.proposedExecpolicyAmendment, null);
    assert.deepEqual(req.params.availableDecisions, ['accept', 'acceptForSession', 'decline', 'cancel']);
    assert.equal(typeof req.params.approvalId, 'string');
    h.send({ jsonrpc: '2.0', id: req.id, result: { decision: 'accept' } });
    let r = await ran;
    assert.equal(r.code, 0, r.stderr.toString());
    assert.ok(existsSync(join(w, 'a')));
    const resolved = await h.next((m) => m.method === 'item/commandExecution/approvalResolved', 'the resolved notification');
    assert.deepEqual(resolved.params, { approvalId: req.params.approvalId, decision: 'accept', reviewDecision: 'approved', approver: 'ide' });

    // approvalPolicy/set: untrusted prompts for unmatched commands, with a proposed amendment
    const set = await h.call('approvalPolicy/set', { approvalPolicy: 'untrusted' });
    assert.equal(set.result.config.approval_policy, 'untrusted');
    ran = run('mkdir made');
    req = await h.next(isApproval, 'an approval request with an amendment');
    assert.deepEqual(req.params.proposedExecpolicyAmendment, ['mkdir', 'made']);
    assert.deepEqual(req.params.availableDecisions, [
      'accept',
      'acceptForSession',
      { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['mkdir', 'made'] } },
      'decline',
      'cancel',
    ]);
    // the proposed rule is what is saved, whatever prefix the host sends
    h.send({ jsonrpc: '2.0', id: req.id, result: { decision: { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['mkdir'] } } } });
    r = await ran;
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(readFileSync(join(te.env.CODEX_HOME, 'rules', 'default.rules'), 'utf8'), /prefix_rule\(pattern=\["mkdir", "made"\], decision="allow"\)/);

    // decline, gate-sh's own names, an unknown decision, an error response: nothing runs
    for (const [answer, reason] of [
      [{ result: { decision: 'decline' } }, /User denied execution/],
      [{ result: { decision: 'abort' } }, /User cancelled execution/],
      [{ result: { decision: 'maybe' } }, /User cancelled execution/],
      [{ error: { code: -1, message: 'host crashed' } }, /User cancelled execution/],
    ] as const) {
      ran = run('touch never');
      req = await h.next(isApproval, 'an approval request to refuse');
      h.send({ jsonrpc: '2.0', id: req.id, ...answer });
      r = await ran;
      assert.equal(r.code, 126);
      assert.match(r.stderr.toString(), reason);
      assert.equal(existsSync(join(w, 'never')), false);
    }
    const rejected = await h.next((m) => m.method === 'item/commandExecution/answerRejected', 'the rejected-answer notification');
    assert.match(rejected.params.message, /invalid decision "maybe"/);

    // sandboxPolicy/set (Codex shape), config/read, status/read
    const sp = await h.call('sandboxPolicy/set', { sandboxPolicy: { type: 'workspace-write', writable_roots: ['/srv'], network_access: true } });
    assert.deepEqual(sp.result.config.sandbox_workspace_write, {
      writable_roots: ['/srv'],
      network_access: true,
      exclude_tmpdir_env_var: false,
      exclude_slash_tmp: false,
    });
    assert.equal((await h.call('config/read')).result.config.sandbox_mode, 'workspace-write');
    assert.deepEqual((await h.call('status/read')).result.status.approvers, ['ide']);

    // JSON-RPC errors
    assert.equal((await h.call('approvalPolicy/set', { approvalPolicy: 'sometimes' })).error.code, -32602);
    assert.equal((await h.call('sandboxPolicy/set', { sandboxPolicy: { type: 'bogus' } })).error.code, -32602);
    assert.equal((await h.call('sandboxPolicy/set', [])).error.code, -32602);
    assert.equal((await h.call('nope')).error.code, -32601);
    h.send({ not: 'json-rpc' } as never);
    assert.equal((await h.next((m) => m.error?.code === -32600, 'invalid request')).id, null);
    h.child.stdin!.write('{oops\n');
    await h.next((m) => m.error?.code === -32700, 'a parse error');

    // the host socket: same protocol, one session per connection
    s = hostProcess(te.env, ['--socket']);
    const sock = join(d.paths.approvalDir, 'host.sock');
    // the socket file, as a host would wait for it: it appears only once it accepts (bound and listening under
    // another name, then renamed into place); then the line says so too
    let said = '';
    s.child.stderr!.on('data', (x) => (said += x));
    const host = s;
    await waitFor(() => existsSync(sock) || undefined, 'the host socket');
    const conn = createConnection(sock);
    await new Promise((res, rej) => conn.once('connect', res).once('error', rej));
    await waitFor(() => said.includes(`gate host: listening on ${sock}\n`) || undefined, 'its line');
    const viaSocket = rpcDriver(conn, conn, async () => void conn.end());
    assert.equal((await viaSocket.call('config/read')).result.config.approval_policy, 'untrusted');
    ran = run('touch b');
    const fromSocket = await viaSocket.next(isApproval, 'an approval request on the socket');
    await h.next(isApproval, 'the same request on stdio');
    viaSocket.send({ jsonrpc: '2.0', id: fromSocket.id, result: { decision: 'acceptForSession' } });
    r = await ran;
    assert.equal(r.code, 0, r.stderr.toString());
    await viaSocket.close();
    const exited = new Promise((res) => host.child.once('exit', res));
    host.child.kill('SIGTERM');
    await exited;
    assert.equal(existsSync(sock), false);
  } catch (err) {
    process.stderr.write(`--- host received:\n${h.received.map((m) => JSON.stringify(m)).join('\n')}\n--- daemon:\n${d.output()}\n`);
    throw err;
  } finally {
    s?.child.kill('SIGKILL'); // a failure midway leaves it running, and the test file with it
    await h.close();
    await d.stop();
    te.cleanup();
  }
});
