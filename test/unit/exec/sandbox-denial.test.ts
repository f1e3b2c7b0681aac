/**
 * src/exec/sandbox-denial.ts: whether a sandboxed attempt failed because of the sandbox, from its exit
 * status and stderr tail alone, and the reason a prompt shows. (test/sandbox/run.test.ts shows the same on
 * real bubblewrap runs.) Pure; test only, no trust boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { denialReason, sandboxDenial } from '../../../src/exec/sandbox-denial.js';

test('each kind is recognised by its evidence line', () => {
  assert.deepEqual(sandboxDenial(1, 'touch: cannot touch x: Read-only file system\n'), {
    kind: 'read-only-fs',
    evidence: 'touch: cannot touch x: Read-only file system',
  });
  assert.equal(sandboxDenial(1, 'npm ERR! code EROFS')?.kind, 'read-only-fs');
  assert.equal(sandboxDenial(6, 'curl: (6) Could not resolve host: example.com')?.kind, 'network');
  assert.equal(sandboxDenial(1, 'getaddrinfo EAI_AGAIN registry.npmjs.org')?.kind, 'network');
  assert.equal(sandboxDenial(1, 'mkdir: cannot create directory: Permission denied')?.kind, 'permission');
  assert.equal(sandboxDenial(1, 'Error: EACCES: open /x')?.kind, 'permission');
});

test('the first kind in order wins over a later one, and the last matching line is the evidence', () => {
  // a read-only file system often comes with a permission line: the cause is the read-only mount
  assert.equal(sandboxDenial(1, 'x: Permission denied\ny: Read-only file system')?.kind, 'read-only-fs');
  assert.equal(sandboxDenial(1, 'a: Permission denied\nb: Operation not permitted\n')?.evidence, 'b: Operation not permitted');
});

test('no denial: success, command not found, no evidence, or the exec gate said no', () => {
  assert.equal(sandboxDenial(0, 'Read-only file system'), null);
  assert.equal(sandboxDenial(127, 'x: Read-only file system'), null);
  assert.equal(sandboxDenial(1, 'make: *** [all] Error 1'), null);
  assert.equal(sandboxDenial(126, 'gate-sh: denied: rm -rf x: forbidden by rule\nrm: Permission denied'), null);
});

test('narrowed: after a 0 only a read-only file system counts', () => {
  assert.equal(sandboxDenial(0, 'touch: cannot touch x: Read-only file system', true)?.kind, 'read-only-fs');
  assert.equal(sandboxDenial(0, 'find: /root: Permission denied', true), null);
  assert.equal(sandboxDenial(0, 'curl: (6) Could not resolve host: x', true), null);
  assert.equal(sandboxDenial(1, 'find: /root: Permission denied', true)?.kind, 'permission');
});

test('the evidence is one trimmed line of at most 300 characters', () => {
  const d = sandboxDenial(1, `   ${'x'.repeat(400)} Read-only file system   \n`);
  assert.equal(d?.evidence.length, 300);
  assert.ok(!d?.evidence.startsWith(' '));
});

test('denialReason says what the sandbox took away, then the evidence', () => {
  assert.equal(denialReason({ kind: 'network', evidence: 'e' }), 'no network in the sandbox: e');
  assert.equal(denialReason({ kind: 'read-only-fs', evidence: 'e' }), 'read-only file system in the sandbox: e');
  assert.equal(denialReason({ kind: 'permission', evidence: 'e' }), 'permission denied in the sandbox: e');
});
