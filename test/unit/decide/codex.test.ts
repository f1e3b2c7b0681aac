/**
 * Codex parity for the exec-policy pipeline: approval_cases, unmatched_decision_cases and
 * requested_amendment_cases, through the public API with a real Policy parsed from each vector's text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vectors, type Vector } from '../../helpers/vectors.js';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseApprovalPolicy } from '../../../src/decide/approval-policy.js';
import { parseSandboxPolicy, type SandboxPolicy } from '../../../src/sandbox/policy.js';
import type { SandboxPermissions } from '../../../src/protocol/sandbox-policy.js';
import { execApprovalRequirement, commandsForExecPolicy } from '../../../src/decide/codex.js';
import { renderDecisionForUnmatchedCommand } from '../../../src/decide/unmatched.js';
import { deriveRequestedAmendment, isBannedPrefixSuggestion } from '../../../src/decide/amendment-proposal.js';

export function vectorSandbox(s: unknown): SandboxPolicy {
  if (typeof s === 'string') return parseSandboxPolicy(s);
  const [type, rest] = Object.entries(s as Record<string, Record<string, unknown>>)[0];
  return parseSandboxPolicy({ type, ...rest });
}
export const vectorPolicy = (text: string | null | undefined) => parsePolicy(text ? [{ path: 'vector.rules', text }] : []);

/**
 * One vector relies on the safelist of its era (`/opt/homebrew/bin/git status` safe by basename). With the
 * newest safelist (git never safe, path-qualified names never safe), which gate-sh follows, it prompts.
 */
const NEWEST_SAFELIST: Record<string, Vector> = {
  absolute_path_exec_approval_requirement_ignores_disallowed_host_executable_paths: {
    type: 'needs_approval',
    reason: null,
    proposed_execpolicy_amendment: ['/opt/homebrew/bin/git', 'status'],
  },
};

test('approval_cases: requirement, reason texts, bypass_sandbox and proposed amendments', () => {
  assert.ok(vectors.approval_cases.length >= 39);
  for (const v of vectors.approval_cases) {
    const key = Object.keys(NEWEST_SAFELIST).find((k) => v.note.startsWith(k));
    const expect = key ? NEWEST_SAFELIST[key] : v.expect;
    const { requirement } = execApprovalRequirement(v.command, {
      policy: vectorPolicy(v.policy),
      approvalPolicy: parseApprovalPolicy(v.approval_policy),
      sandboxPolicy: vectorSandbox(v.sandbox),
      sandboxPermissions: v.sandbox_permissions as SandboxPermissions,
      prefixRule: v.prefix_rule,
    });
    const got = requirement as unknown as Record<string, unknown>;
    for (const [k, val] of Object.entries(expect)) assert.deepEqual(got[k], val, `${v.note}: ${k} of ${JSON.stringify(v.command)} → ${JSON.stringify(got)}`);
  }
});

test('unmatched_decision_cases: §4.3 fallback', () => {
  for (const v of vectors.unmatched_decision_cases) {
    const d = renderDecisionForUnmatchedCommand(v.command, {
      approvalPolicy: parseApprovalPolicy(v.approval_policy),
      sandboxPolicy: vectorSandbox(v.sandbox),
      sandboxPermissions: v.sandbox_permissions,
      usedComplexParsing: v.used_complex_parsing,
    });
    assert.equal(d, v.decision, v.note);
  }
});

test('requested_amendment_cases: banned prefixes, empty, and an existing match', () => {
  for (const v of vectors.requested_amendment_cases) {
    const prefix: string[] | null = v.prefix_rule;
    const policy = vectorPolicy(v.existing_match ? `prefix_rule(pattern=${JSON.stringify(v.existing_match)}, decision="prompt")` : null);
    const command = prefix?.length ? [...prefix, 'arg'] : ['cargo', 'build'];
    const fallback = () => 'prompt' as const;
    const options = { resolveHostExecutables: true, hardened: false };
    const ev = policy.checkMultiple([command], options, fallback);
    const got = deriveRequestedAmendment({ prefixRule: prefix, matchedRules: ev.matchedRules, policy, commands: [command], fallback, options });
    assert.equal(got !== null, v.offered, `${JSON.stringify(prefix)} (${v.note})`);
    if (got) assert.deepEqual(got, prefix);
    if (prefix?.length && !v.existing_match) assert.equal(isBannedPrefixSuggestion(prefix), !v.offered);
  }
});

test('commands_for_exec_policy: plain → heredoc prefix → whole argv', () => {
  assert.deepEqual(commandsForExecPolicy(['bash', '-lc', 'ls && pwd']), { commands: [['ls'], ['pwd']], usedComplexParsing: false });
  assert.deepEqual(commandsForExecPolicy(['bash', '-lc', "python3 <<'PY'\nprint(1)\nPY"]), { commands: [['python3']], usedComplexParsing: true });
  assert.deepEqual(commandsForExecPolicy(['bash', '-lc', 'cat > f']), { commands: [['bash', '-lc', 'cat > f']], usedComplexParsing: false });
  assert.deepEqual(commandsForExecPolicy(['ls', '-l']), { commands: [['ls', '-l']], usedComplexParsing: false });
});
