/** The session-approval key: shell + canonical command + cwd + requested permissions + execution. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalKey, canonicalizeCommandForApproval, SHELL_SCRIPT_MARKER, type ApprovalKeyInput } from '../../../src/decide/approval-key.js';

const base: ApprovalKeyInput = { command: ['git', 'status'], cwd: '/w', sandboxPermissions: 'use_default' };

test('canonicalisation (§2.6 newest): one plain command → its words; other scripts keep the shell path', () => {
  assert.deepEqual(canonicalizeCommandForApproval(['bash', '-lc', 'git status']), ['git', 'status']);
  assert.deepEqual(canonicalizeCommandForApproval(['/bin/zsh', '-c', 'ls && pwd']), [SHELL_SCRIPT_MARKER, '/bin/zsh', '-c', 'ls && pwd']);
  assert.deepEqual(canonicalizeCommandForApproval(['bash', '-lc', 'cat > f']), [SHELL_SCRIPT_MARKER, 'bash', '-lc', 'cat > f']);
  assert.deepEqual(canonicalizeCommandForApproval(['/tmp/bash', '-lc', 'ls && pwd']), ['/tmp/bash', '-lc', 'ls && pwd']);
  assert.deepEqual(canonicalizeCommandForApproval(['ls', '-l']), ['ls', '-l']);
});

test('equal requests give equal keys; the same command spelled as a one-command script too', () => {
  assert.equal(approvalKey(base), approvalKey({ ...base }));
  assert.equal(approvalKey(base), approvalKey({ ...base, command: ['bash', '-lc', 'git status'] }));
  const p1 = { network: false, file_system: { write: ['/b', '/a', '/a'] } };
  const p2 = { file_system: { write: ['/a', '/b'], read: [] } };
  assert.equal(
    approvalKey({ ...base, sandboxPermissions: 'with_additional_permissions', additionalPermissions: p1 }),
    approvalKey({ ...base, sandboxPermissions: 'with_additional_permissions', additionalPermissions: p2 }),
  );
  assert.doesNotThrow(() => JSON.parse(approvalKey(base)));
});

test('a different cwd, shell, permission request or execution mode is a different approval', () => {
  const k = approvalKey(base);
  const others: ApprovalKeyInput[] = [
    { ...base, cwd: '/other' },
    { ...base, shell: '/bin/bash' },
    { ...base, sandboxPermissions: 'require_escalated' },
    { ...base, sandboxPermissions: 'with_additional_permissions', additionalPermissions: { network: true } },
    { ...base, execution: { type: 'Unsandboxed' } },
    { ...base, execution: { type: 'Permissions', profile: { file_system: { write: ['/x'] } } } },
    { ...base, command: ['git', 'status', '--short'] },
    { ...base, command: ['bash', '-lc', 'git status && ls'] },
  ];
  const keys = new Set([k, ...others.map(approvalKey)]);
  assert.equal(keys.size, others.length + 1);
  const w1 = approvalKey({ ...base, execution: { type: 'Permissions', profile: { file_system: { write: ['/x'] } } } });
  const w2 = approvalKey({ ...base, execution: { type: 'Permissions', profile: { file_system: { write: ['/x', '/y'] } } } });
  assert.notEqual(w1, w2, 'a cached approval never covers wider permissions');
});
