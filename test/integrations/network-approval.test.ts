/**
 * Network prompts on the MCP and JSON-RPC surfaces, with Codex's shapes: the host gets
 * `networkApprovalContext: {host, protocol}` (v2 spelling), `proposedNetworkPolicyAmendments` and an
 * `applyNetworkPolicyAmendment` decision; its answer saves the network_rule (a real `gate host` against a
 * real daemon in this process); an answer naming another action than the offered one is refused, never
 * turned into it. The MCP elicitation text and its decision enum (pure).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { approvalRequestParams, hostDecision, resolvedParams, reviewDecisionFromHost } from '../../src/integrations/host-protocol.js';
import { decisionForElicitation, elicitationFor } from '../../src/integrations/elicitation.js';
import { parseReviewDecision, type PromptEvent } from '../../src/protocol/approval.js';
import { renderPrompt, decisionForKey } from '../../src/client/prompt-view.js';
import { defaultRulesFile } from '../../src/rules/index.js';
import { GATE } from '../helpers/env.js';
import { killAll, track, waitFor } from '../helpers/daemon.js';
import { netRig } from '../daemon/network-rig.js';
import { hostProcess } from './helpers.js';

after(killAll);

const SAVE = { network_policy_amendment: { network_policy_amendment: { host: 'registry.test', action: 'allow' as const } } };
const PROMPT: PromptEvent = {
  approval_id: 'ap-1',
  run_id: 'r-1',
  origin: 'network',
  command: ['bash', '-c', 'npm install'],
  display: "bash -c 'npm install'",
  cwd: '/w',
  reason: 'no network_rule or allowed_domains entry allows registry.test',
  network_approval_context: { host: 'registry.test', protocol: 'socks5_tcp' },
  network_port: 1080,
  proposed_network_policy_amendments: [{ host: 'registry.test', action: 'allow' }],
  amendment_rule: 'network_rule(host="registry.test", protocol="socks5_tcp", decision="allow")',
  available_decisions: ['approved', 'approved_for_session', SAVE, 'denied', 'abort'],
  created_at: '2026-01-01T00:00:00Z',
};

test('JSON-RPC host shapes: Codex v2 networkApprovalContext, proposedNetworkPolicyAmendments, applyNetworkPolicyAmendment', () => {
  const p = approvalRequestParams(PROMPT);
  assert.deepEqual(p.networkApprovalContext, { host: 'registry.test', protocol: 'socks5Tcp' });
  assert.equal(p.networkPort, 1080);
  assert.deepEqual(p.proposedNetworkPolicyAmendments, [{ host: 'registry.test', action: 'allow' }]);
  assert.deepEqual(p.availableDecisions, [
    'accept',
    'acceptForSession',
    { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'registry.test', action: 'allow' } } },
    'decline',
    'cancel',
  ]);
  assert.equal(p.command, "bash -c 'npm install'");
  // a command prompt has none of them
  assert.equal(approvalRequestParams({ ...PROMPT, origin: 'exec', network_approval_context: undefined }).networkApprovalContext, undefined);
  // answers: Codex's object, the bare name, the core spelling; the action is kept
  const allow = { decision: { network_policy_amendment: { network_policy_amendment: { host: '', action: 'allow' } } } };
  assert.deepEqual(reviewDecisionFromHost({ decision: { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'x', action: 'allow' } } } }), allow);
  assert.deepEqual(reviewDecisionFromHost({ decision: 'applyNetworkPolicyAmendment' }), allow);
  assert.deepEqual(reviewDecisionFromHost({ decision: SAVE }), allow);
  const deny = reviewDecisionFromHost({ decision: { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'x', action: 'deny' } } } });
  assert.deepEqual(deny, { decision: { network_policy_amendment: { network_policy_amendment: { host: '', action: 'deny' } } } });
  assert.ok('error' in reviewDecisionFromHost({ decision: { applyNetworkPolicyAmendment: { network_policy_amendment: { action: 'maybe' } } } }));
  assert.deepEqual(hostDecision(SAVE), { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'registry.test', action: 'allow' } } });
  assert.deepEqual(resolvedParams({ approval_id: 'ap-1', decision: SAVE, approver: 'ide' }).reviewDecision, 'network_policy_amendment');
  // the approval channel's own wire form
  assert.deepEqual(parseReviewDecision('network_policy_amendment'), allow.decision);
  assert.throws(() => parseReviewDecision({ network_policy_amendment: { network_policy_amendment: { action: 'sometimes' } } }));
});

test('MCP elicitation and the terminal: the connection, the run command, and the save-a-rule answer', () => {
  const e = elicitationFor(PROMPT);
  assert.match(e.message, /^Allow `bash -c 'npm install'` in `\/w` to connect to `registry\.test:1080` \(socks5_tcp\)\?/);
  assert.match(e.message, /"network_policy_amendment" saves: network_rule\(host="registry\.test", protocol="socks5_tcp", decision="allow"\)/);
  assert.equal(e.requestedSchema.title, 'Network Permission Request');
  assert.deepEqual(e.requestedSchema.properties.decision?.enum, ['approved', 'approved_for_session', 'network_policy_amendment']);
  assert.deepEqual(decisionForElicitation(PROMPT, { action: 'accept', content: { decision: 'network_policy_amendment' } }), SAVE);
  assert.equal(decisionForElicitation(PROMPT, { action: 'accept' }), 'approved');
  assert.equal(decisionForElicitation(PROMPT, { action: 'decline' }), 'denied');
  const shown = renderPrompt(PROMPT);
  assert.match(shown, /connect: registry\.test:1080 \(socks5_tcp\)/);
  assert.match(shown, /by: {6}bash -c 'npm install'/);
  assert.match(shown, /\[p\] allow and save a network_rule/);
  assert.deepEqual(decisionForKey(PROMPT, 'p'), SAVE);
});

test('a real gate host answers a network prompt: another action is refused, the offered amendment saves the rule', { timeout: 90_000 }, async () => {
  const rig = await netRig();
  const h = hostProcess(rig.te.env, ['--name', 'ide']);
  track(h.child);
  try {
    await h.call('initialize', {});
    await waitFor(() => rig.daemon.broker.approverNames().includes('ide'), 'the host to attach');
    const run = await rig.run('npm install');
    const isApproval = (m: Record<string, any>) => m.method === 'item/commandExecution/requestApproval';

    // a deny amendment when only allow is offered: refused, not turned into the offered allow
    let verdict = rig.decide(run, 'first.test', 443, 'https');
    let req = await h.next(isApproval, 'the first network approval request');
    assert.deepEqual(req.params.networkApprovalContext, { host: 'first.test', protocol: 'https' });
    assert.deepEqual(req.params.commandArgv, ['bash', '-c', 'npm install']);
    h.send({ jsonrpc: '2.0', id: req.id, result: { decision: { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'first.test', action: 'deny' } } } } });
    const rejected = await h.next((m) => m.method === 'item/commandExecution/answerRejected', 'the rejection');
    assert.match(rejected.params.message, /'network_policy_amendment' is not offered/);
    // (not spawnSync: the daemon answering it runs in this process)
    const cli = track(spawn(process.execPath, [GATE, 'approve', '--answer', req.params.approvalId, 'denied'], { env: rig.te.env, stdio: 'ignore' }));
    assert.equal(await new Promise((r) => cli.once('exit', r)), 0);
    assert.equal((await verdict).decision, 'deny');

    // the offered amendment: allowed, and the rule is saved
    verdict = rig.decide(run, 'registry.test', 443, 'https');
    req = await h.next(isApproval, 'the second network approval request');
    h.send({ jsonrpc: '2.0', id: req.id, result: { decision: { applyNetworkPolicyAmendment: { network_policy_amendment: { host: 'ignored.test', action: 'allow' } } } } });
    const v = await verdict;
    assert.deepEqual([v.decision, v.reason], ['allow', 'approved and saved as a network_rule']);
    assert.equal(readFileSync(defaultRulesFile(rig.te.env), 'utf8'), 'network_rule(host="registry.test", protocol="https", decision="allow")\n');
  } finally {
    await h.close();
    await rig.stop();
    rig.te.cleanup();
  }
});
