/**
 * Differential: for plain scripts without wrappers, assignments or quoting differences, gate-sh's
 * per-subcommand decision (with Codex's matching) must give exactly Codex's overall requirement —
 * the same type, reason text, bypass_sandbox and proposed amendment. One documented difference: Codex
 * checks a granular rejection once for the whole command (a rule prompt anywhere → the `rules` switch
 * decides); gate-sh asks per subcommand, so a heuristic prompt that `sandbox_approval = false` rejects is
 * rejected even beside a rule prompt (Codex's "hardened variant").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import type { SandboxPermissions } from '../../../src/protocol/sandbox-policy.js';
import { parseApprovalPolicy, type ApprovalPolicy } from '../../../src/decide/approval-policy.js';
import { decideInvocation } from '../../../src/decide/script.js';
import { execApprovalRequirement } from '../../../src/decide/codex.js';
import { REJECT_SANDBOX_APPROVAL_REASON } from '../../../src/decide/requirement.js';

const SCRIPTS = [
  'ls', 'ls && pwd', 'cargo build', 'cargo build && echo ok', 'rm -rf /tmp/x', 'git status', 'git push origin main',
  'cat LOG.md && curl -fsSL https://x.invalid/s -o s', 'apple | orange', 'npm test', 'echo hi ; ls | wc -l',
  'sed -n 1,5p f', 'find . -name x', 'rg foo', 'git status || rm -f x', 'madeup-cmd --flag', 'cat a && apple',
];
const POLICIES = [
  '',
  'prefix_rule(pattern=["git"], decision="prompt", justification="git is reviewed")\nprefix_rule(pattern=["rm"], decision="forbidden")',
  'prefix_rule(pattern=["cat"])\nprefix_rule(pattern=["curl"])\nprefix_rule(pattern=["apple"])\nprefix_rule(pattern=["cargo", "build"])\nprefix_rule(pattern=["ls"])\nprefix_rule(pattern=["rm"], decision="prompt")',
];
const APPROVALS: ApprovalPolicy[] = ['untrusted', 'on-request', 'never', parseApprovalPolicy({ granular: { sandbox_approval: false, rules: true } })];
const SANDBOXES = ['read-only', 'danger-full-access'];
const PERMS: SandboxPermissions[] = ['use_default', 'require_escalated'];

test('plain scripts: assess agrees with the Codex pipeline on the overall requirement', () => {
  let n = 0;
  let hardened = 0;
  for (const text of POLICIES) {
    const policy = parsePolicy(text ? [{ path: 'd.rules', text }] : []);
    for (const script of SCRIPTS)
      for (const approvalPolicy of APPROVALS)
        for (const sb of SANDBOXES)
          for (const sandboxPermissions of PERMS) {
            const ctx = { policy, approvalPolicy, sandboxPolicy: parseSandboxPolicy(sb), sandboxPermissions, hardened: false };
            const argv = ['bash', '-lc', script];
            const codex = execApprovalRequirement(argv, ctx).requirement;
            const ours = decideInvocation(argv, ctx);
            assert.equal(ours.complex, false, script);
            const label = `${script} | ${JSON.stringify(approvalPolicy)} | ${sb} | ${sandboxPermissions} | rules ${POLICIES.indexOf(text)}`;
            n++;
            if (codex.type === 'needs_approval' && ours.requirement.type === 'forbidden' && ours.requirement.reason === REJECT_SANDBOX_APPROVAL_REASON) {
              // the hardened per-category check: a rule prompted AND a heuristic prompt was rejected
              const sources = ours.subcommands.map((s) => s.decided_by);
              assert.ok(sources.some((x) => x.type === 'rule' && x.decision === 'prompt'), label);
              assert.ok(ours.subcommands.some((s) => s.decided_by.type === 'heuristic' && s.requirement.type === 'forbidden'), label);
              hardened++;
              continue;
            }
            assert.deepEqual(ours.requirement, codex, label);
          }
  }
  assert.ok(hardened > 0 && hardened < n / 10, `hardened differences: ${hardened}`);
  assert.equal(n, SCRIPTS.length * POLICIES.length * APPROVALS.length * SANDBOXES.length * PERMS.length);
});
