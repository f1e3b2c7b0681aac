/**
 * Which exec-gate answers the supervisor may give again for any argv (src/decide/reuse.ts): only a Run the
 * approval policy's own heuristic gave to a program no rule names and no heuristic reads the arguments of,
 * called by its own name. Pure: plain policies and contexts. Each refusal is shown next to the same program
 * or context that is reusable, so no case passes by refusing everything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { decideIntercepted, type InterceptedContext } from '../../../src/decide/intercepted.js';
import { argvDecides, reusableForAnyArgv, type ReuseInput } from '../../../src/decide/reuse.js';
import type { ApprovalPolicy } from '../../../src/decide/approval-policy.js';

const policyOf = (text: string) => parsePolicy(text ? [{ path: 'test.rules', text }] : []);

interface Case {
  rules?: string;
  approval?: ApprovalPolicy;
  sandbox?: string;
  input?: Partial<ReuseInput>;
  ctx?: Partial<InterceptedContext>;
}

function reusable(program: string, argv: string[], o: Case = {}): boolean {
  const policy = policyOf(o.rules ?? '');
  const ctx: InterceptedContext = {
    policy,
    approvalPolicy: o.approval ?? 'on-request',
    sandboxPolicy: parseSandboxPolicy(o.sandbox ?? 'workspace-write'),
    sandboxPermissions: 'use_default',
    ...(o.input?.realProgram ? { realProgram: o.input.realProgram } : {}),
    ...(o.input?.knownAs ? { knownAs: o.input.knownAs } : {}),
    ...o.ctx,
  };
  const d = decideIntercepted(program, argv, '/work', ctx);
  return reusableForAnyArgv(policy, d, { program, argv, skill: false, ownAnswer: true, ...o.input });
}

test('an unknown program run in place by the approval policy is reusable, in workspace-write and in danger-full-access', () => {
  assert.equal(reusable('/usr/lib/gcc/x86_64-linux-gnu/12/cc1', ['cc1', '-quiet', 'a.c']), true);
  assert.equal(reusable('/usr/bin/as', ['as', '--64', '-o', 'a.o']), true);
  assert.equal(reusable('/work/build/tool', ['tool']), true);
  assert.equal(reusable('/usr/bin/as', ['as'], { sandbox: 'danger-full-access' }), true);
  assert.equal(reusable('/usr/bin/as', ['as'], { approval: 'never' }), true);
});

test('a program a rule names, by path or by name, is decided every time', () => {
  assert.equal(reusable('/usr/bin/as', ['as'], { rules: 'prefix_rule(pattern=["as", "--64"], decision="allow")' }), false);
  assert.equal(reusable('/usr/bin/as', ['as'], { rules: 'prefix_rule(pattern=["/usr/bin/as"], decision="prompt")' }), false);
  assert.equal(reusable('/usr/bin/as', ['as'], { rules: 'prefix_rule(pattern=["ld"], decision="forbidden")' }), true);
  // a symlink's target is named by a rule: the target's rule applies too
  assert.equal(reusable('/usr/bin/cc', ['cc'], { rules: 'prefix_rule(pattern=["gcc-12"], decision="prompt")', input: { realProgram: '/usr/bin/gcc-12' } }), false);
  assert.equal(reusable('/usr/bin/cc', ['cc'], { input: { realProgram: '/usr/bin/gcc-12' } }), true);
});

test('programs whose arguments a heuristic reads are decided every time', () => {
  for (const p of ['/bin/rm', '/usr/bin/sudo', '/usr/bin/git', '/work/mygit', '/bin/bash', '/bin/sh', '/usr/bin/zsh', '/usr/bin/python3', '/usr/bin/node', '/usr/bin/perl',
    '/usr/bin/env', '/usr/bin/timeout', '/usr/bin/nice', '/bin/busybox', '/lib64/ld-linux-x86-64.so.2', '/usr/bin/bfs', '/usr/bin/ugrep']) {
    assert.equal(argvDecides(p), true, p);
    assert.equal(reusable(p, [p.slice(p.lastIndexOf('/') + 1), 'x']), false, p);
  }
  for (const p of ['/usr/bin/as', '/usr/bin/make', '/usr/bin/ld', '/work/tool']) assert.equal(argvDecides(p), false, p);
});

test('called by another name (exec -a), a copy of a guarded program, a skill script or a settled answer: decided every time', () => {
  assert.equal(reusable('/work/tool', ['rm', '-f', 'x']), false);
  assert.equal(reusable('/work/tool', ['tool', '-f', 'x']), true);
  assert.equal(reusable('/work/tool', ['tool'], { input: { knownAs: 'rm' }, rules: 'prefix_rule(pattern=["rm"], decision="forbidden")' }), false);
  assert.equal(reusable('/work/skills/x/scripts/run.sh', ['run.sh']), false);
  assert.equal(reusable('/work/tool', ['tool'], { input: { skill: true } }), false);
  assert.equal(reusable('/work/tool', ['tool'], { input: { ownAnswer: false } }), false);
});

test('what is not a Run in place is decided every time: prompts, escalations, a requested escalation', () => {
  assert.equal(reusable('/usr/bin/as', ['as'], { approval: 'untrusted' }), false);
  assert.equal(reusable('/usr/bin/as', ['as'], { ctx: { sandboxPermissions: 'require_escalated' } }), false);
  assert.equal(reusable('/usr/bin/as', ['as'], { rules: 'prefix_rule(pattern=["as"], decision="allow")' }), false);
  // known-safe under untrusted is argv-dependent (find -exec): not reused either
  assert.equal(reusable('/usr/bin/cat', ['cat', 'x'], { approval: 'untrusted' }), false);
});
