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
import { argvDecides, reusableForAnyArgv, reusableInScope, type ReuseInput } from '../../../src/decide/reuse.js';
import type { Provenance } from '../../../src/decide/provenance.js';
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

const SCOPE = { pid: 4242, start: 777, ppid: 4200 };
const BY_MAKE: Provenance = { kind: 'program', widen: false, by: ['make', '-s'], scope: SCOPE };

/** The scope a Run of this exec may be reused in, when the exec is made under make (or `prov`). */
function scoped(program: string, argv: string[], o: Case & { prov?: Provenance } = {}): unknown {
  const policy = policyOf(o.rules ?? '');
  const prov = o.prov ?? BY_MAKE;
  const ctx: InterceptedContext = {
    policy,
    approvalPolicy: o.approval ?? 'on-request',
    sandboxPolicy: parseSandboxPolicy(o.sandbox ?? 'workspace-write'),
    sandboxPermissions: 'use_default',
    provenance: () => prov,
    ...o.ctx,
  };
  const d = decideIntercepted(program, argv, '/work', ctx);
  return reusableInScope(policy, d, { program, argv, skill: false, ownAnswer: true, ...o.input }, () => prov);
}

test('below a program running its own files, rm and sh -c are reusable for any argv in that program\'s scope (issue 29)', () => {
  assert.deepEqual(scoped('/usr/bin/rm', ['rm', '-rf', 'conftest*']), SCOPE);
  assert.deepEqual(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { sandbox: 'danger-full-access' }), SCOPE);
  assert.deepEqual(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { approval: 'never' }), SCOPE);
  assert.deepEqual(scoped('/bin/bash', ['bash', '-c', 'test -f config.h || rm -f stamp-h1']), SCOPE);
  assert.deepEqual(scoped('/bin/sh', ['sh', './configure', '-q']), SCOPE);
  // the model's own rm, an unsure one, or a program's without a known process: never in scope
  assert.equal(scoped('/usr/bin/rm', ['rm', '-rf', 'x'], { prov: { kind: 'model', widen: true } }), null);
  assert.equal(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { prov: { kind: 'unsure', widen: false } }), null);
  assert.equal(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { prov: { kind: 'program', widen: false } }), null);
});

test('in scope, a rule about the program, or any prefix rule for a shell or an interpreter, keeps it decided every time', () => {
  assert.equal(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { rules: 'prefix_rule(pattern=["rm"], decision="forbidden")' }), null);
  assert.equal(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { rules: 'prefix_rule(pattern=["rm", "-rf", "/"], decision="prompt")' }), null);
  assert.equal(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { rules: 'prefix_rule(pattern=["/usr/bin/rm"], decision="allow")' }), null);
  // a rule about another program leaves rm reusable, not the shells (`sh ./x` is judged as ./x too)
  assert.deepEqual(scoped('/usr/bin/rm', ['rm', '-f', 'x'], { rules: 'prefix_rule(pattern=["configure"], decision="prompt")' }), SCOPE);
  assert.equal(scoped('/bin/sh', ['sh', '-c', 'true'], { rules: 'prefix_rule(pattern=["configure"], decision="prompt")' }), null);
  assert.equal(scoped('/usr/bin/python3', ['python3', 'x.py'], { rules: 'prefix_rule(pattern=["configure"], decision="prompt")' }), null);
  assert.deepEqual(scoped('/usr/bin/python3', ['python3', 'x.py']), SCOPE);
});

test('in scope, wrappers, the loader, multi-call binaries, drop-in names and what hands commands elsewhere are decided every time', () => {
  for (const p of ['/usr/bin/env', '/usr/bin/timeout', '/bin/busybox', '/lib64/ld-linux-x86-64.so.2', '/usr/bin/bfs', '/usr/bin/ssh', '/usr/bin/tmux', '/usr/bin/at'])
    assert.equal(scoped(p, [p.slice(p.lastIndexOf('/') + 1), 'x']), null, p);
  for (const p of ['/usr/bin/ssh', '/usr/bin/tmux']) assert.equal(argvDecides(p), true, p);
  // nor called by another name, a copy of a guarded program, a skill script, a settled answer, an escalation
  assert.equal(scoped('/work/tool', ['rm', '-f', 'x']), null);
  assert.equal(scoped('/work/skills/x/scripts/run.sh', ['run.sh']), null);
  assert.equal(scoped('/work/tool', ['tool'], { input: { ownAnswer: false } }), null);
  assert.equal(scoped('/usr/bin/rm', ['rm'], { ctx: { sandboxPermissions: 'require_escalated' } }), null);
  assert.deepEqual(scoped('/work/tool', ['tool']), SCOPE);
});
