/** The pure mappings: prompt ↔ elicitation, prompt ↔ host request/decision, sandbox state, assessor output. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PromptEvent } from '../../../src/protocol/approval.js';
import { decisionForElicitation, elicitationFor } from '../../../src/integrations/elicitation.js';
import { approvalRequestParams, hostDecision, reviewDecisionFromHost } from '../../../src/integrations/host-protocol.js';
import { sandboxPolicyFromState, sandboxStateOfCall, SandboxStateError } from '../../../src/integrations/sandbox-state.js';
import { stricterSandbox } from '../../../src/sandbox/stricter.js';
import { parseAssessment } from '../../../src/daemon/risk-assessor.js';
import { ConfigError, configFromTable, DEFAULT_CONFIG } from '../../../src/config/config.js';

const AMEND = { approved_execpolicy_amendment: { proposed_execpolicy_amendment: ['cargo', 'build'] } };
const prompt = (over: Partial<PromptEvent> = {}): PromptEvent => ({
  approval_id: 'id1',
  run_id: 'r-1',
  origin: 'preflight',
  command: ['cargo', 'build'],
  display: 'cargo build',
  cwd: '/w',
  available_decisions: ['approved', 'approved_for_session', AMEND, 'denied', 'abort'],
  created_at: '2026-01-01T00:00:00Z',
  ...over,
});

test('elicitation: Codex message and schema, extra lines, decisions offered as an optional enum', () => {
  const e = elicitationFor(
    prompt({ reason: 'why', matched_rule: 'f.rules:2', risk_assessment: { summary: 'builds', risk_level: 'low' }, amendment_rule: 'prefix_rule(...)' }),
  );
  assert.equal(
    e.message,
    'Allow agent to run `cargo build` in `/w`?\nReason: why\nRule: f.rules:2\nRisk: low: builds\n"approved_execpolicy_amendment" saves: prefix_rule(...)',
  );
  assert.equal(e.requestedSchema.title, 'Execution Permission Request');
  assert.deepEqual(e.requestedSchema.properties.reason, { type: 'string', description: 'Optional reason for allowing or denying execution' });
  assert.deepEqual(e.requestedSchema.properties.decision.enum, ['approved', 'approved_for_session', 'approved_execpolicy_amendment']);
  assert.equal(elicitationFor(prompt({ available_decisions: ['approved', 'abort'] })).requestedSchema.properties.decision, undefined);
  assert.equal(elicitationFor(prompt()).message, 'Allow agent to run `cargo build` in `/w`?');
  assert.equal(elicitationFor(prompt({ sandbox_permissions: 'require_escalated' })).message.split('\n')[1], 'Asks: to run outside the sandbox');
  assert.equal(
    elicitationFor(prompt({ sandbox_permissions: 'with_additional_permissions', requested_permissions: { network: true } })).message.split('\n')[1],
    'Asks: additional permissions {"network":true}',
  );
  assert.equal(elicitationFor(prompt({ sandbox_permissions: 'use_default' })).message, 'Allow agent to run `cargo build` in `/w`?');
});

test('elicitation answers: accept/decline/cancel, chosen approvals only when offered', () => {
  const p = prompt();
  assert.equal(decisionForElicitation(p, { action: 'accept' }), 'approved');
  assert.equal(decisionForElicitation(p, { action: 'accept', content: { decision: 'approved_for_session' } }), 'approved_for_session');
  assert.deepEqual(decisionForElicitation(p, { action: 'accept', content: { decision: 'approved_execpolicy_amendment' } }), AMEND);
  assert.equal(decisionForElicitation(p, { action: 'accept', content: { decision: 'denied' } }), 'approved'); // not an approval kind
  assert.equal(
    decisionForElicitation(prompt({ available_decisions: ['approved', 'abort'] }), { action: 'accept', content: { decision: 'approved_for_session' } }),
    'approved',
  );
  assert.equal(decisionForElicitation(p, { action: 'decline' }), 'denied');
  assert.equal(decisionForElicitation(prompt({ available_decisions: ['approved', 'abort'] }), { action: 'decline' }), 'abort');
  assert.equal(decisionForElicitation(p, { action: 'cancel' }), 'abort');
});

test('host protocol: request params, decisions both ways', () => {
  const r = approvalRequestParams(
    prompt({
      proposed_execpolicy_amendment: ['cargo', 'build'],
      risk_assessment: { summary: 's', risk_level: 'medium' },
      sandbox_permissions: 'require_escalated',
    }),
  );
  assert.equal(r.approvalId, 'id1');
  assert.equal(r.command, 'cargo build');
  assert.deepEqual(r.proposedExecpolicyAmendment, ['cargo', 'build']);
  assert.deepEqual(r.availableDecisions, [
    'accept',
    'acceptForSession',
    { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['cargo', 'build'] } },
    'decline',
    'cancel',
  ]);
  assert.deepEqual(r.riskAssessment, { summary: 's', riskLevel: 'medium' });
  assert.equal(r.sandboxPermissions, 'require_escalated');
  assert.equal(hostDecision('denied'), 'decline');
  for (const [v, want] of [
    ['accept', 'approved'],
    ['acceptForSession', 'approved_for_session'],
    ['decline', 'denied'],
    ['cancel', 'abort'],
    ['approved', 'approved'],
    ['approved_for_session', 'approved_for_session'],
    ['denied', 'denied'],
    ['abort', 'abort'],
  ] as const)
    assert.deepEqual(reviewDecisionFromHost({ decision: v }), { decision: want }, v);
  const amend = { decision: { approved_execpolicy_amendment: { proposed_execpolicy_amendment: [] } } };
  assert.deepEqual(reviewDecisionFromHost({ decision: 'acceptWithExecpolicyAmendment' }), amend);
  assert.deepEqual(reviewDecisionFromHost({ decision: { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['rm'] } } }), amend);
  for (const bad of [undefined, null, {}, { decision: 'yes' }, { decision: 1 }, { decision: ['accept'] }, 'accept'])
    assert.ok('error' in reviewDecisionFromHost(bad), JSON.stringify(bad));
});

test('sandbox state: Codex shape, sandboxCwd becomes a writable root, bad params are named', () => {
  assert.deepEqual(
    sandboxPolicyFromState({
      sandboxPolicy: { type: 'workspace-write', writable_roots: ['/a'], network_access: true },
      sandboxCwd: '/w',
      codexLinuxSandboxExe: '/x',
    }),
    {
      type: 'workspace-write',
      writable_roots: ['/a', '/w'],
      network_access: true,
      exclude_tmpdir_env_var: false,
      exclude_slash_tmp: false,
    },
  );
  assert.deepEqual(sandboxPolicyFromState({ sandboxPolicy: { type: 'read-only' }, sandboxCwd: '/w' }), { type: 'read-only' });
  assert.deepEqual(sandboxPolicyFromState({ sandboxPolicy: { type: 'external-sandbox', network_access: 'enabled' } }), {
    type: 'external-sandbox',
    network_access: 'enabled',
  });
  for (const [bad, msg] of [
    [undefined, /missing params/],
    [{}, /needs "sandboxPolicy"/],
    [{ sandboxPolicy: { type: 'bogus' } }, /failed to deserialize/],
    [{ sandboxPolicy: { type: 'workspace-write', writable_roots: ['rel'] } }, /must be an absolute path/],
    [{ sandboxPolicy: 'read-only', sandboxCwd: 'rel' }, /sandboxCwd/],
  ] as const)
    assert.throws(() => sandboxPolicyFromState(bad), (e: Error) => e instanceof SandboxStateError && msg.test(e.message));
});

test('sandbox state: the stricter of the host\'s and gate-sh\'s own; a looser request never widens', () => {
  const ws = (o: Record<string, unknown> = {}) => ({
    type: 'workspace-write' as const,
    writable_roots: [] as string[],
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
    ...o,
  });
  const ro = { type: 'read-only' as const };
  const dfa = { type: 'danger-full-access' as const };
  const ext = (n: 'enabled' | 'restricted') => ({ type: 'external-sandbox' as const, network_access: n });
  assert.deepEqual(stricterSandbox(ws(), ro), ro);
  assert.deepEqual(stricterSandbox(ro, ws()), ro);
  assert.deepEqual(stricterSandbox(ws(), dfa), ws());
  assert.deepEqual(stricterSandbox(dfa, ws()), ws());
  assert.deepEqual(stricterSandbox(ext('enabled'), dfa), ext('enabled'));
  assert.deepEqual(stricterSandbox(ext('enabled'), ext('restricted')), ext('restricted'));
  assert.deepEqual(stricterSandbox(ws(), ext('enabled')), ws());
  // two workspace-writes: the roots both allow, network only if both, /tmp only if both leave it writable
  assert.deepEqual(
    stricterSandbox(ws({ writable_roots: ['/a', '/b'], network_access: true }), ws({ writable_roots: ['/b', '/c'], network_access: false, exclude_slash_tmp: true })),
    ws({ writable_roots: ['/b'], exclude_slash_tmp: true }),
  );
  assert.deepEqual(stricterSandbox(ws({ network_access: true }), ws({ network_access: true })), ws({ network_access: true }));
});

test('assessor output: exactly {summary, risk_level}', () => {
  assert.deepEqual(parseAssessment('{"summary":" a\\n b ","risk_level":"high","extra":1}\n'), { summary: 'a b', risk_level: 'high' });
  assert.equal((parseAssessment(JSON.stringify({ summary: 'x'.repeat(600), risk_level: 'low' })) as { summary: string }).summary.length, 500);
  for (const bad of [
    '',
    'null',
    '[]',
    '{"summary":"x"}',
    '{"summary":"","risk_level":"low"}',
    '{"summary":1,"risk_level":"low"}',
    '{"summary":"x","risk_level":"LOW"}',
    'not json',
  ])
    assert.equal(typeof parseAssessment(bad), 'string', bad);
});

test('config risk_assessor: a command string or argv; anything else names the file and key', () => {
  assert.equal(configFromTable({ risk_assessor: 'assess --json' }, 'c.toml').risk_assessor, 'assess --json');
  assert.deepEqual(configFromTable({ risk_assessor: ['/bin/assess', '--json'] }, 'c.toml').risk_assessor, ['/bin/assess', '--json']);
  assert.equal(DEFAULT_CONFIG.risk_assessor, undefined); // off by default
  for (const bad of ['', ' ', [], [''], [1], 5, true])
    assert.throws(
      () => configFromTable({ risk_assessor: bad }, 'c.toml'),
      (e: Error) => e instanceof ConfigError && /^c\.toml: 'risk_assessor' must be/.test(e.message),
      JSON.stringify(bad),
    );
});

test("sandbox state as Codex 0.169+ sends it with each call (_meta, a PermissionProfile): mapped, or refused when gate-sh cannot apply it", () => {
  const root = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };
  const managed = (entries: object[], network = 'restricted') => ({
    permissionProfile: { type: 'managed', file_system: { type: 'restricted', entries: [root, ...entries] }, network },
    sandboxCwd: 'file:///home/me/proj',
  });
  const meta = { 'codex/sandbox-state': managed([]), 'codex/sandbox-state-meta': managed([]) };
  assert.deepEqual(sandboxStateOfCall(meta), managed([]));
  assert.equal(sandboxStateOfCall({ progressToken: 1 }), undefined);
  assert.equal(sandboxStateOfCall(undefined), undefined);
  // codex exec's default and --sandbox read-only
  assert.deepEqual(sandboxPolicyFromState(managed([])), { type: 'read-only' });
  // --sandbox workspace-write: the workspace, /tmp and $TMPDIR; its read-only .git is gate-sh's protected path
  const ws = managed([
    { path: { type: 'path', path: '/home/me/proj' }, access: 'write' },
    { path: { type: 'special', value: { kind: 'slash_tmp' } }, access: 'write' },
    { path: { type: 'special', value: { kind: 'tmpdir' } }, access: 'write' },
    { path: { type: 'path', path: '/home/me/proj/.git' }, access: 'read', missing_path_behavior: 'skip' },
  ]);
  assert.deepEqual(sandboxPolicyFromState(ws), {
    type: 'workspace-write',
    writable_roots: ['/home/me/proj'],
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  });
  assert.deepEqual(sandboxPolicyFromState(managed([{ path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' }], 'enabled')), {
    type: 'workspace-write',
    writable_roots: ['/home/me/proj'],
    network_access: true,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: true,
  });
  // /tmp alone cannot be said without the run's folder: the nearest without widening is read-only
  assert.deepEqual(sandboxPolicyFromState(managed([{ path: { type: 'special', value: { kind: 'slash_tmp' } }, access: 'write' }])), { type: 'read-only' });
  assert.deepEqual(sandboxPolicyFromState({ permissionProfile: { type: 'disabled' } }), { type: 'danger-full-access' });
  assert.deepEqual(sandboxPolicyFromState({ permissionProfile: { type: 'external', network: 'enabled' } }), { type: 'external-sandbox', network_access: 'enabled' });
  // what gate-sh cannot apply as asked is refused, never ignored
  for (const [bad, msg] of [
    [managed([{ path: { type: 'path', path: '/home/me/proj/secret' }, access: 'none' }]), /only read and write access/],
    [{ ...managed([]), permissionProfile: { type: 'managed', file_system: { type: 'restricted', entries: [] }, network: 'restricted' } }, /reads only some folders/],
    [managed([{ path: { type: 'special', value: { kind: 'something_new' } }, access: 'write' }]), /a writable entry gate-sh cannot apply/],
    [managed([], 'sometimes'), /unknown network policy/],
    [{ permissionProfile: { type: 'new-kind' } }, /unknown permission profile/],
    [{ ...managed([]), sandboxCwd: 'relative' }, /"sandboxCwd" must be an absolute path/],
  ] as const)
    assert.throws(() => sandboxPolicyFromState(bad), (e: Error) => e instanceof SandboxStateError && msg.test(e.message), JSON.stringify(bad));
});

test('stricter sandbox: workspace roots intersect by folder, not by spelling', () => {
  const ws = (roots: string[]) => ({
    type: 'workspace-write' as const,
    writable_roots: roots,
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  });
  const roots = (a: string[], b: string[]) => (stricterSandbox(ws(a), ws(b)) as { writable_roots: string[] }).writable_roots;
  assert.deepEqual(roots(['/a'], ['/']), ['/a']);
  assert.deepEqual(roots(['/a/b', '/c'], ['/a']), ['/a/b']);
  assert.deepEqual(roots(['/ab'], ['/a']), []);
});
