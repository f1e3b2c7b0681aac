/** The exec-gate decision: Codex parity (intercepted_exec_cases, join_program_cases) and gate-sh hardening. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vectors } from '../../helpers/vectors.js';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseApprovalPolicy } from '../../../src/decide/approval-policy.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import type { SandboxPermissions } from '../../../src/protocol/sandbox-policy.js';
import {
  decideIntercepted, joinProgram, actionForReview, reuseSettled, FORBIDDEN_BY_POLICY, type InterceptedContext,
} from '../../../src/decide/intercepted.js';

const policyOf = (text: string) => parsePolicy(text ? [{ path: 'vector.rules', text }] : []);

function vectorContext(v: Record<string, any>): InterceptedContext {
  const sandboxText: string = v.sandbox;
  const denyEntries = sandboxText.includes('deny');
  const perms: string = v.sandbox_permissions ?? 'use_default';
  // "with_additional_permissions (preapproved -> treated as use_default)": the caller already approved them.
  const sandboxPermissions = (perms.includes('preapproved') ? 'use_default' : perms.split(' ')[0]) as SandboxPermissions;
  return {
    policy: policyOf(v.policy),
    approvalPolicy: parseApprovalPolicy(v.approval_policy),
    sandboxPolicy: parseSandboxPolicy(denyEntries ? 'read-only' : sandboxText),
    sandboxPermissions,
    additionalPermissions: sandboxPermissions === 'with_additional_permissions' ? { file_system: { write: ['/tmp/extra'] } } : undefined,
    sandboxHasDenyEntries: denyEntries,
    shellWrapperParsing: v.shell_wrapper_parsing === true,
    hardened: false, // Codex's matching, for parity; gate-sh's default is hardened (tested below)
  };
}

test('join_program_cases', () => {
  for (const v of vectors.join_program_cases) assert.deepEqual(joinProgram(v.program, v.argv), v.joined);
});

test('intercepted_exec_cases (shell-wrapper parsing off by default, as in newest Codex; on when asked)', () => {
  let n = 0;
  for (const v of vectors.intercepted_exec_cases) {
    n++;
    const d = decideIntercepted(v.program, v.argv, '/work', vectorContext(v));
    const e = v.expect;
    if (e.decision) assert.equal(d.decision, e.decision, v.note);
    if (e.decision_driven_by_policy !== undefined) assert.equal(d.decision_driven_by_policy, e.decision_driven_by_policy, v.note);
    if (e.heuristics_command) {
      assert.deepEqual(d.evaluation.matchedRules.map((m) => m.type), ['heuristicsRuleMatch'], v.note);
      assert.deepEqual((d.evaluation.matchedRules[0] as { command: string[] }).command, e.heuristics_command, v.note);
    }
    if (e.matchedPrefix) {
      const m = d.evaluation.matchedRules[0];
      assert.equal(m.type, 'prefixRuleMatch', v.note);
      if (m.type === 'prefixRuleMatch') {
        assert.deepEqual(m.matchedPrefix, e.matchedPrefix, v.note);
        if (e.resolvedProgram) assert.equal(m.resolvedProgram, e.resolvedProgram, v.note);
      }
    }
    if (e.escalation_decision === 'Run') assert.deepEqual(d.action, { type: 'Run' }, v.note);
    else if (e.escalation_decision) assert.deepEqual(d.action, { type: 'Deny', reason: e.escalation_decision.Deny.reason }, v.note);
  }
  assert.equal(n, 8);
});

const base = (rules: string, over: Partial<InterceptedContext> = {}): InterceptedContext => ({
  policy: policyOf(rules),
  approvalPolicy: 'on-request',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
  ...over,
});

test('the mapping: explicit allow → Escalate(Unsandboxed), heuristic allow → Run, forbidden → Deny', () => {
  const allow = decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', base('prefix_rule(pattern=["git", "status"])'));
  assert.deepEqual(allow.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
  assert.equal(allow.decision_driven_by_policy, true);
  assert.deepEqual(allow.decided_by, {
    type: 'rule',
    decision: 'allow',
    matched_prefix: ['git', 'status'],
    file: 'vector.rules',
    line: 1,
    col: 1,
    resolved_program: '/usr/bin/git',
  });
  const heur = decideIntercepted('/usr/bin/ls', ['ls'], '/w', base(''));
  assert.deepEqual(heur.action, { type: 'Run' });
  assert.deepEqual(heur.decided_by, { type: 'heuristic', decision: 'allow', name: 'sandbox', command: ['/usr/bin/ls'] });
  const forb = decideIntercepted('/usr/bin/rm', ['rm', '-f', 'x'], '/w', base('prefix_rule(pattern=["rm"], decision="forbidden")'));
  assert.deepEqual(forb.action, { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
});

test('hardened by default: a forbidden basename rule catches any path spelling', () => {
  const rules = 'prefix_rule(pattern=["rm"], decision="forbidden")\nhost_executable(name="rm", paths=["/usr/bin/rm"])';
  for (const prog of ['/usr/bin/rm', '/bin/rm', '/opt/evil/rm', '/tmp/rm'])
    assert.equal(decideIntercepted(prog, ['rm', 'x'], '/w', base(rules)).decision, 'forbidden', prog);
  // Codex's own matching lets the disallowed path through to the heuristics.
  assert.equal(decideIntercepted('/opt/evil/rm', ['rm', 'x'], '/w', base(rules, { hardened: false })).decision, 'allow');
});

test('a symlink to a forbidden or prompted program: a rule about the real program decides too (rules only)', () => {
  const ctx = {
    ...vectorContext({ sandbox: 'workspace-write', approval_policy: 'on-request', policy: '' }),
    policy: policyOf(
      'prefix_rule(pattern=["rm"], decision="forbidden")\nprefix_rule(pattern=["curl"], decision="prompt")\nprefix_rule(pattern=["ls"], decision="allow")',
    ),
    hardened: true,
  };
  const rm = decideIntercepted('/tmp/x', ['x', '-f', 'y'], '/work', { ...ctx, realProgram: '/usr/bin/rm' });
  assert.equal(rm.decision, 'forbidden');
  assert.deepEqual(rm.action, { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
  assert.deepEqual(rm.command, ['/tmp/x', '-f', 'y'], 'the prompt and the log show what was called');
  assert.equal(decideIntercepted('/tmp/x', ['x', 'https://e.x'], '/work', { ...ctx, realProgram: '/usr/bin/curl' }).action, 'prompt');
  // not stricter: the called name's own decision stands; no real path, or the same path: unchanged
  assert.equal(decideIntercepted('/usr/bin/ls', ['ls'], '/work', { ...ctx, realProgram: '/usr/bin/busybox' }).decision, 'allow');
  assert.equal(
    decideIntercepted('/tmp/x', ['x'], '/work', { ...ctx, realProgram: '/tmp/x' }).decision,
    decideIntercepted('/tmp/x', ['x'], '/work', ctx).decision,
  );
  assert.notEqual(decideIntercepted('/tmp/x', ['x', '-f', 'y'], '/work', ctx).decision, 'forbidden', 'without the real path the name alone cannot tell');
});

test('prompts: as the request asked once approved; Denied/Abort texts; rejected by never', () => {
  const rules = 'prefix_rule(pattern=["npm", "publish"], decision="prompt")';
  const p = decideIntercepted('/usr/bin/npm', ['npm', 'publish'], '/w', base(rules));
  assert.equal(p.action, 'prompt');
  assert.deepEqual(p.on_approval, { type: 'Escalate', execution: { type: 'Unsandboxed' } }, 'policy-driven → Unsandboxed');
  assert.deepEqual(actionForReview(p, 'approved'), p.on_approval);
  assert.deepEqual(actionForReview(p, 'denied'), { type: 'Deny', reason: 'User denied execution' });
  assert.deepEqual(actionForReview(p, 'abort'), { type: 'Deny', reason: 'User cancelled execution' });
  assert.deepEqual(p.available_decisions, ['approved', 'approved_for_session', 'denied', 'abort']);
  const never = decideIntercepted('/usr/bin/npm', ['npm', 'publish'], '/w', base(rules, { approvalPolicy: 'never' }));
  assert.equal(never.action !== 'prompt' && never.action.type, 'Deny');
  // fallback prompt with additional permissions → Permissions(profile) once approved, [approved, ..., abort]
  const profile = { file_system: { write: ['/tmp/x'] } };
  const q = decideIntercepted(
    '/usr/bin/touch',
    ['touch', '/tmp/x/y'],
    '/w',
    base('', { sandboxPermissions: 'with_additional_permissions', additionalPermissions: profile }),
  );
  assert.equal(q.action, 'prompt');
  assert.deepEqual(q.on_approval, { type: 'Escalate', execution: { type: 'Permissions', profile } });
  // untrusted: a heuristic prompt, approved → Run (use_default, not policy-driven)
  const u = decideIntercepted('/usr/bin/make', ['make'], '/w', base('', { approvalPolicy: 'untrusted' }));
  assert.equal(u.action, 'prompt');
  assert.deepEqual(u.on_approval, { type: 'Run' });
  const granular = decideIntercepted(
    '/usr/bin/make',
    ['make'],
    '/w',
    base('', { approvalPolicy: parseApprovalPolicy({ granular: { sandbox_approval: false, rules: true } }), sandboxPermissions: 'require_escalated' }),
  );
  assert.deepEqual(granular.action, { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
});

test('code-loading variables turn a widening escalation into a prompt (LD_PRELOAD=./evil.so git status)', () => {
  const rules = 'prefix_rule(pattern=["git", "status"])';
  const clean = decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', base(rules, { env: { PATH: '/usr/bin:/bin', HOME: '/root' } }));
  assert.deepEqual(clean.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
  const evil = decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', base(rules, { env: { PATH: '/usr/bin:/bin', LD_PRELOAD: './evil.so' } }));
  assert.equal(evil.action, 'prompt');
  assert.deepEqual(evil.code_loading.map((v) => v.name), ['LD_PRELOAD']);
  assert.match(evil.reason, /LD_PRELOAD/);
  const never = decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', base(rules, { approvalPolicy: 'never', env: { GIT_CONFIG_COUNT: '1' } }));
  assert.equal(never.action !== 'prompt' && never.action.type, 'Deny');
  // Run in place (inside the caller's sandbox) is not a widening: not checked.
  const inPlace = decideIntercepted('/usr/bin/ls', ['ls'], '/w', base('', { env: { LD_PRELOAD: './evil.so' } }));
  assert.deepEqual(inPlace.action, { type: 'Run' });
  // gate-sh's own shim in LD_PRELOAD is not a finding
  const own = decideIntercepted(
    '/usr/bin/git',
    ['git', 'status'],
    '/w',
    base(rules, { env: { LD_PRELOAD: '/opt/gate/shim.so' }, codeLoading: { own: { LD_PRELOAD: ['/opt/gate/shim.so'] } } }),
  );
  assert.deepEqual(own.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
});

test('an escalation never runs a program from a writable folder: it runs in the sandbox, unasked', () => {
  const rules = 'prefix_rule(pattern=["git", "status"])';
  const codeLoading = { writableRoots: ['/work/ws', '/tmp'] };
  const sys = decideIntercepted('/usr/bin/git', ['git', 'status'], '/work/ws', base(rules, { codeLoading }));
  assert.deepEqual(sys.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
  for (const prog of ['/work/ws/bin/git', '/tmp/git', '/work/ws/../ws/git']) {
    const d = decideIntercepted(prog, ['git', 'status'], '/work/ws', base(rules, { codeLoading }));
    assert.deepEqual(d.action, { type: 'Run' }, prog);
    assert.match(d.reason, /a folder the sandbox can write: it runs in the sandbox/);
  }
  // with no sandbox to keep it in, a person decides
  const dfa = decideIntercepted('/tmp/git', ['git', 'status'], '/work/ws', base(rules, { codeLoading, sandboxPolicy: parseSandboxPolicy('danger-full-access') }));
  assert.equal(dfa.action, 'prompt');
  assert.match(dfa.reason, /writable folder/);
  assert.deepEqual(decideIntercepted('/work/wsx/git', ['git', 'status'], '/w', base(rules, { codeLoading })).action, {
    type: 'Escalate',
    execution: { type: 'Unsandboxed' },
  });
});

test('skill scripts: declared permissions only after an approval (session approvals offered); none → turn sandbox', () => {
  const profile = { network: false, file_system: { write: ['/skills/s/out'] } };
  const rules = 'prefix_rule(pattern=["/skills/s/scripts/run.sh"])';
  const d = decideIntercepted('/skills/s/scripts/run.sh', ['run.sh'], '/w', base(rules, { skill: { permissions: profile } }));
  assert.equal(d.action, 'prompt', 'an allow rule does not skip the human for declared permissions');
  assert.deepEqual(d.on_approval, { type: 'Escalate', execution: { type: 'Permissions', profile } });
  assert.deepEqual(d.available_decisions, ['approved', 'approved_for_session', 'denied', 'abort']);
  const none = decideIntercepted('/skills/s/scripts/run.sh', ['run.sh'], '/w', base(rules, { skill: {} }));
  assert.deepEqual(none.action, { type: 'Run' }, 'never Unsandboxed by a rule: the turn sandbox');
  const forbidden = decideIntercepted(
    '/skills/s/scripts/run.sh',
    ['run.sh'],
    '/w',
    base('prefix_rule(pattern=["run.sh"], decision="forbidden")', { skill: { permissions: profile } }),
  );
  assert.deepEqual(forbidden.action, { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
  const never = decideIntercepted('/skills/s/scripts/run.sh', ['run.sh'], '/w', base('', { approvalPolicy: 'never', skill: { permissions: profile } }));
  assert.deepEqual(never.action, { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
});

test('reusing a settled pre-flight answer: never past a forbidden rule or exec-time hardening', () => {
  const settledRun = { type: 'Run' } as const;
  const settledEsc = { type: 'Escalate', execution: { type: 'Unsandboxed' } } as const;
  // an ordinary prompt is not asked twice
  const p = decideIntercepted('/usr/bin/make', ['make'], '/w', base('', { approvalPolicy: 'untrusted' }));
  assert.deepEqual(reuseSettled(p, settledRun), settledRun);
  // forbidden at every depth
  const f = decideIntercepted('/usr/bin/rm', ['rm', 'x'], '/w', base('prefix_rule(pattern=["rm"], decision="forbidden")'));
  assert.deepEqual(reuseSettled(f, settledEsc), { type: 'Deny', reason: FORBIDDEN_BY_POLICY });
  // what needs no prompt stands as decided now
  const r = decideIntercepted('/usr/bin/ls', ['ls'], '/w', base(''));
  assert.deepEqual(reuseSettled(r, settledEsc), { type: 'Run' });
  // hardening prompts are asked: the earlier approval never saw this environment or program
  const rules = 'prefix_rule(pattern=["git", "status"])';
  const env = decideIntercepted('/usr/bin/git', ['git', 'status'], '/w', base(rules, { env: { LD_PRELOAD: './evil.so' } }));
  assert.equal(env.hardening, 'code-loading');
  assert.equal(reuseSettled(env, settledEsc), 'prompt');
  const prog = decideIntercepted('/w/bin/git', ['git', 'status'], '/w', base(rules, { codeLoading: { writableRoots: ['/w'] } }));
  assert.equal(prog.hardening, 'writable-program');
  assert.deepEqual(reuseSettled(prog, settledEsc), { type: 'Run' }, 'an escalation settled earlier never takes it out');
});


test('without explicit writable roots, the turn sandbox decides which PATH entries and programs are suspect', () => {
  const rules = 'prefix_rule(pattern=["make"])';
  const ESC = { type: 'Escalate', execution: { type: 'Unsandboxed' } };
  const ws = (env: Record<string, string>, prog = '/usr/bin/make') => decideIntercepted(prog, ['make'], '/w', base(rules, { env }));
  assert.deepEqual(ws({ PATH: '/root/.local/bin:/opt/gate/shims:/usr/bin:/bin' }).action, ESC, 'folders the sandbox cannot write');
  assert.equal(ws({ PATH: '/w/node_modules/.bin:/usr/bin' }).action, 'prompt', 'inside the workspace');
  assert.equal(ws({ PATH: '/tmp/x:/usr/bin' }).action, 'prompt', 'a temporary folder');
  assert.deepEqual(ws({ PATH: '/usr/bin' }, '/w/tools/make').action, { type: 'Run' }, 'a program the caller could have written runs in the sandbox');
  const ro = decideIntercepted(
    '/usr/bin/make',
    ['make'],
    '/w',
    base(rules, { sandboxPolicy: parseSandboxPolicy('read-only'), env: { PATH: '/w/bin:/usr/bin' } }),
  );
  assert.deepEqual(ro.action, ESC, 'read-only: the workspace is not writable from the sandbox');
});
