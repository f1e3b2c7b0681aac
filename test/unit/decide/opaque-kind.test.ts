/**
 * The assessment decides on the analysis' structured opaque marker, not on reason texts: a dynamic
 * command name is never allowed by a heuristic even where its reason text is not among the (capped)
 * reasons, and each opaque subcommand reports its kind in the JSON.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { decideInvocation, type DecideContext } from '../../../src/decide/script.js';

const ctx: DecideContext = {
  policy: parsePolicy([]),
  approvalPolicy: 'on-request',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
};
const sh = (script: string) => decideInvocation(['bash', '-lc', script], ctx);

test('a dynamic command name after 60 other reasons: still judged as opaque (sandboxed, issue 29)', () => {
  const a = sh(Array.from({ length: 60 }, () => '(aa)').join('; ') + '; $x -rf y');
  assert.equal(a.complex, true);
  assert.ok(!a.complex_reasons.some((r) => r.includes('non-literal')), 'the reason text is past the cap');
  // runs in the turn sandbox with its exec decided when it happens, and says so
  assert.equal(a.decision, 'allow');
  assert.equal(a.subcommands[0].decided_by.type === 'heuristic' && a.subcommands[0].decided_by.name, 'sandboxed');
  // the same script without the dynamic name runs in the turn sandbox as any complex script
  const b = sh(Array.from({ length: 60 }, () => '(aa)').join('; '));
  assert.equal(b.decision, 'allow');
  assert.equal(b.subcommands[0].decided_by.type === 'heuristic' && b.subcommands[0].decided_by.name, 'sandbox');
});

test('opaque_kind beside opaque, for subcommands, literal commands and bare argvs', () => {
  const plain = sh("ssh host ls && echo ok");
  assert.deepEqual(plain.subcommands.map((s) => [s.opaque_kind, s.opaque]), [['remote', 'ssh runs a remote command'], [undefined, undefined]]);
  assert.notEqual(plain.subcommands[0].decision, 'allow');
  // (an eval of literal words is seen through; one of a variable is not)
  const lit = sh("eval \"$cmd\"; (python3 -c 'import os')");
  assert.deepEqual(lit.subcommands.filter((s) => s.kind === 'literal').map((s) => s.opaque_kind), ['eval', 'inline-code']);
  const bare = decideInvocation(['sudo', '-s'], ctx);
  assert.equal(bare.subcommands[0].opaque_kind, 'shell');
  assert.equal(bare.decision, 'prompt');
});
