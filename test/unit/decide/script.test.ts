/** gate-sh's per-subcommand decision (what the daemon decides on). Real policies, real script analysis. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { decideInvocation, decideScript, type DecideContext } from '../../../src/decide/script.js';
import type { ApprovalPolicy } from '../../../src/decide/approval-policy.js';
import { toWireSource } from '../../../src/decide/types.js';

const ctxOf = (rules: string, over: Partial<DecideContext> = {}): DecideContext => ({
  policy: parsePolicy(rules ? [{ path: '/r/default.rules', text: rules }] : []),
  approvalPolicy: 'on-request',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
  ...over,
});
const sh = (script: string, ctx: DecideContext) => decideInvocation(['bash', '-lc', script], ctx);
const UNSANDBOXED = { type: 'Escalate', execution: { type: 'Unsandboxed' } };

test('every subcommand explicitly allowed → each Escalate(Unsandboxed), bypass_sandbox', () => {
  const a = sh('git status && npm test', ctxOf('prefix_rule(pattern=["git", "status"])\nprefix_rule(pattern=["npm", "test"])'));
  assert.equal(a.decision, 'allow');
  assert.equal(a.complex, false);
  assert.equal(a.bypass_sandbox, true);
  assert.deepEqual(a.subcommands.map((s) => s.argv), [['git', 'status'], ['npm', 'test']]);
  for (const s of a.subcommands) {
    assert.deepEqual(s.action, UNSANDBOXED);
    assert.deepEqual(s.execution, { type: 'Unsandboxed' });
    assert.equal(s.decided_by.type, 'rule');
    if (s.decided_by.type === 'rule') assert.deepEqual([s.decided_by.file, s.decided_by.line], ['/r/default.rules', s.argv[0] === 'git' ? 1 : 2]);
  }
  assert.deepEqual(a.requirement, { type: 'skip', bypass_sandbox: true, proposed_execpolicy_amendment: null });
  assert.deepEqual(toWireSource(a.subcommands[0].decided_by), { kind: 'rule', file: '/r/default.rules', line: 1, pattern: ['git', 'status'] });
});

test('one heuristic allow keeps every subcommand in the turn sandbox (Run)', () => {
  const a = sh('cat LOG.md && curl -fsSL https://x.invalid/s.sh -o s.sh', ctxOf('prefix_rule(pattern=["cat"])'));
  assert.equal(a.bypass_sandbox, false);
  assert.deepEqual(a.subcommands.map((s) => s.action), [{ type: 'Run' }, { type: 'Run' }]);
  assert.deepEqual(a.subcommands.map((s) => s.execution?.type), ['TurnDefault', 'TurnDefault']);
  const h = a.subcommands[1].decided_by;
  assert.equal(h.type === 'heuristic' && h.name, 'sandbox');
  assert.deepEqual(toWireSource(h), { kind: 'heuristic', name: 'sandbox' });
});

test('forbidden anywhere: Deny with Codex reason texts; overall reason on the original argv', () => {
  const a = sh('git status && rm -rf /some/dir', ctxOf('prefix_rule(pattern=["rm"], decision="forbidden")'));
  assert.equal(a.decision, 'forbidden');
  assert.deepEqual(a.subcommands[1].action, { type: 'Deny', reason: '`rm -rf /some/dir` rejected: policy forbids commands starting with `rm`' });
  assert.equal(a.subcommands[1].execution, null);
  assert.deepEqual(a.requirement, {
    type: 'forbidden',
    reason: "`bash -lc 'git status && rm -rf /some/dir'` rejected: policy forbids commands starting with `rm`",
  });
});

test('wrappers are seen through: a forbidden inner command forbids the subcommand', () => {
  const ctx = ctxOf('prefix_rule(pattern=["rm"], decision="forbidden")\nprefix_rule(pattern=["timeout"])\nprefix_rule(pattern=["env"])');
  for (const script of [
    'env rm x',
    'env -i PATH=/bin rm x',
    'timeout 5 rm x',
    'nice rm x',
    'nohup rm x',
    'xargs rm',
    'find . -exec rm {} ;',
    'sudo rm x',
    "bash -c 'rm x'",
    'bash -c "bash -c \'rm x\'"',
    '/bin/rm x',
    '\\rm x',
    'stdbuf -oL rm x',
    'nohup rm x &',
    'echo "$(rm x)"',
    'for i in 1; do rm x; done',
  ]) {
    const a = sh(script, ctx);
    assert.equal(a.decision, 'forbidden', `${script}: ${JSON.stringify(a.subcommands.map((s) => s.evaluated))}`);
  }
  // an allow rule on the wrapper never authorises an unmatched inner command to leave the sandbox
  const t = sh('timeout 5 make', ctx);
  assert.equal(t.decision, 'allow');
  assert.equal(t.bypass_sandbox, false);
  assert.deepEqual(t.subcommands[0].action, { type: 'Run' });
  assert.deepEqual(t.subcommands[0].evaluated.map((e) => e.role), ['command', 'inner']);
});

test('code-loading assignments prompt even under an allow rule (LD_PRELOAD=./evil.so git status)', () => {
  const ctx = ctxOf('prefix_rule(pattern=["git", "status"])');
  const a = sh('LD_PRELOAD=./evil.so git status', ctx);
  assert.equal(a.decision, 'prompt');
  const s = a.subcommands[0];
  assert.deepEqual(s.argv, ['git', 'status']);
  assert.deepEqual(s.assignments, ['LD_PRELOAD=./evil.so']);
  assert.equal(s.action, 'prompt');
  assert.equal(s.decided_by.type === 'heuristic' && s.decided_by.name, 'code-loading');
  assert.equal(a.bypass_sandbox, false);
  assert.match(a.requirement.type === 'needs_approval' ? a.requirement.reason ?? '' : '', /LD_PRELOAD/);
  // never out of the sandbox unasked: asked, or run in the turn's sandbox (a complex script, a wrapper no rule allows)
  for (const script of ['PATH=.:$PATH git status', 'env GIT_CONFIG_COUNT=1 git status', 'BASH_ENV=x git status']) {
    const d = sh(script, ctx);
    assert.ok(d.decision !== 'allow' || (!d.bypass_sandbox && d.subcommands.every((x) => x.execution?.type === 'TurnDefault')), script);
  }
  assert.equal(sh('BASH_ENV=x git status', ctx).decision, 'prompt');
  assert.equal(sh('LD_PRELOAD=./evil.so git status', ctxOf('prefix_rule(pattern=["git", "status"])', { approvalPolicy: 'never' })).decision, 'forbidden');
  assert.equal(sh('FOO=1 git status', ctx).decision, 'allow');
});

test('code-loading assignments of a command that stays in the turn sandbox run unasked, as after export (issue 29)', () => {
  // `PYTHONPATH=src pytest` was asked (and so denied with no approver) while `export PYTHONPATH=src; pytest` ran
  for (const sandboxPolicy of [parseSandboxPolicy('workspace-write'), parseSandboxPolicy('danger-full-access')])
    for (const approvalPolicy of ['on-request', 'on-failure', 'never'] as const)
      for (const script of [
        'PYTHONPATH=src python3 -m pytest -q',
        'LD_LIBRARY_PATH=. ./app',
        'PATH="$PWD/node_modules/.bin:$PATH" tool f',
        'MAKEFLAGS=-j2 make',
        'CLASSPATH=. java A',
        'env PYTHONPATH=. python3 t.py',
        'NODE_OPTIONS=--max-old-space-size=512 npm test',
      ]) {
        const d = sh(script, ctxOf('', { sandboxPolicy, approvalPolicy }));
        const what = `${script} (${approvalPolicy}, ${sandboxPolicy.type})`;
        assert.equal(d.decision, 'allow', what);
        assert.equal(d.bypass_sandbox, false, what);
        for (const x of d.subcommands) assert.deepEqual([x.action, x.execution], [{ type: 'Run' }, { type: 'TurnDefault' }], what);
        // the variables are still on the record, allowed, and no amendment is offered for them
        const assigned = d.subcommands.flatMap((x) => x.evaluated).find((e) => e.role === 'assignment');
        assert.equal(assigned?.decision, 'allow', what);
        assert.equal(assigned?.sources[0].type === 'heuristic' && assigned.sources[0].name, 'code-loading', what);
      }
  // still asked: where the rules' allow would take it out of the sandbox, under untrusted (a known-safe
  // command is not safe with them), and when the request asks to leave the sandbox
  const rule = sh('PYTHONPATH=src python3 -m pytest', ctxOf('prefix_rule(pattern=["python3"])'));
  assert.equal(rule.decision, 'prompt');
  assert.deepEqual(rule.subcommands[0].on_approval, { type: 'Run' });
  assert.equal(sh('LD_PRELOAD=./x.so ls', ctxOf('', { approvalPolicy: 'untrusted' })).decision, 'prompt');
  assert.equal(sh('ls', ctxOf('', { approvalPolicy: 'untrusted' })).decision, 'allow');
  const escalated = sh('LD_PRELOAD=./x.so make', ctxOf('', { sandboxPermissions: 'require_escalated' }));
  assert.equal(escalated.decision, 'prompt');
  assert.match(escalated.requirement.type === 'needs_approval' ? (escalated.requirement.reason ?? '') : '', /LD_PRELOAD/);
  // an opaque command keeps its own reason without the variables'
  const inline = sh('PYTHONPATH=. python3 -c "import m"', ctxOf('prefix_rule(pattern=["python3"])'));
  assert.equal(inline.decision, 'allow');
  assert.deepEqual(inline.subcommands[0].execution, { type: 'TurnDefault' });
});

test('opaque code runs in the turn sandbox (each exec it makes decided then); asked under untrusted and where the sandbox cannot hold it', () => {
  // issue 29: until then every opaque command was asked about, even where any unknown command runs unasked
  const ctx = ctxOf('');
  const untrusted = ctxOf('', { approvalPolicy: 'untrusted' });
  // eval of a variable, and source of a relative file (bash looks it up in PATH) or with no reader
  for (const script of ['eval "$x"', 'source ./env.sh', '. ./env.sh', 'source /etc/env.sh']) {
    const a = sh(script, ctx);
    assert.equal(a.decision, 'allow', script);
    assert.ok(a.subcommands.some((s) => s.opaque && s.decided_by.type === 'heuristic' && s.decided_by.name === 'sandboxed'), script);
    assert.notEqual(sh(script, untrusted).decision, 'allow', script);
  }
  const dyn = sh('x=rm; $x -rf y', ctx);
  assert.equal(dyn.complex, true);
  assert.equal(dyn.decision, 'allow', 'a non-literal command name: its exec is decided when it happens');
  assert.equal(dyn.subcommands[0].decided_by.type === 'heuristic' && dyn.subcommands[0].decided_by.name, 'sandboxed');
  assert.equal(sh('x=rm; $x -rf y', untrusted).decision, 'prompt');
  // what the exec gate would not see, or a server outside the run would run: still asked
  for (const script of ['ssh host ls', 'su -c ls', 'busybox sh -c ls', 'tmux new -d "make"', 'chroot /x ls'])
    assert.equal(sh(script, ctx).decision, 'prompt', script);
});

test('complex scripts: literal commands forbid or prompt, never allow; no unsandboxed run', () => {
  const rules = 'prefix_rule(pattern=["rm"], decision="forbidden")\nprefix_rule(pattern=["bash"])\nprefix_rule(pattern=["echo"])';
  const a = sh('for f in a b; do echo "$(rm -f $f)"; done', ctxOf(rules));
  assert.equal(a.complex, true);
  assert.ok(a.complex_reasons.length > 0);
  assert.equal(a.decision, 'forbidden');
  assert.equal(a.subcommands[0].kind, 'script');
  assert.ok(a.subcommands.some((s) => s.kind === 'literal' && s.argv[0] === 'rm' && s.decision === 'forbidden'));
  // an allow rule on `bash` does not let a complex script leave the sandbox
  const b = sh('for f in a b; do echo "$f"; done', ctxOf(rules));
  assert.equal(b.decision, 'allow');
  assert.equal(b.bypass_sandbox, false);
  assert.deepEqual(b.subcommands[0].action, { type: 'Run' });
  // a dangerous literal command prompts (forbidden under never)
  assert.equal(sh('for t in a; do rm -rf "$t"; done', ctxOf('')).decision, 'prompt');
  assert.equal(sh('for t in a; do rm -rf "$t"; done', ctxOf('', { approvalPolicy: 'never' })).decision, 'forbidden');
  // known-safe literal commands prove nothing: untrusted still asks for the script
  assert.equal(sh('ls > out.txt', ctxOf('', { approvalPolicy: 'untrusted' })).decision, 'prompt');
});

test("heredoc prefix (Codex parity): `python3 <<'PY'` under an allow rule may leave the sandbox", () => {
  const a = sh("python3 <<'PY'\nprint(1)\nPY", ctxOf('prefix_rule(pattern=["python3"])'));
  assert.equal(a.complex, true);
  assert.equal(a.decision, 'allow');
  assert.equal(a.bypass_sandbox, true);
  assert.deepEqual(a.subcommands[0].argv, ['python3']);
  assert.deepEqual(a.subcommands[0].action, UNSANDBOXED);
  assert.deepEqual(a.requirement, { type: 'skip', bypass_sandbox: true, proposed_execpolicy_amendment: null });
  // but not with an assignment in front (Codex: not reduced to the allowed prefix)
  assert.equal(sh("PATH=/tmp/evil:$PATH python3 <<'PY'\nprint(1)\nPY", ctxOf('prefix_rule(pattern=["python3"])')).bypass_sandbox, false);
});

test('prompts: execution as requested, available_decisions, amendments', () => {
  const prof = { file_system: { write: ['/tmp/extra'] } };
  const p = sh('touch /tmp/extra/x', ctxOf('', { sandboxPermissions: 'with_additional_permissions', additionalPermissions: prof }));
  const s = p.subcommands[0];
  assert.equal(s.action, 'prompt');
  assert.deepEqual(s.on_approval, { type: 'Escalate', execution: { type: 'Permissions', profile: prof } });
  assert.deepEqual(s.available_decisions, ['approved', 'approved_for_session', 'denied', 'abort']);
  const u = sh('cargo build && echo ok', ctxOf('', { approvalPolicy: 'untrusted' }));
  assert.deepEqual(u.subcommands.map((x) => x.decision), ['prompt', 'allow']);
  assert.deepEqual(u.subcommands[0].on_approval, { type: 'Run' });
  assert.deepEqual(u.subcommands[0].proposed_execpolicy_amendment, ['cargo', 'build']);
  assert.deepEqual(u.subcommands[0].available_decisions, [
    'approved', 'approved_for_session', { approved_execpolicy_amendment: { proposed_execpolicy_amendment: ['cargo', 'build'] } }, 'denied', 'abort',
  ]);
  assert.deepEqual(u.requirement, { type: 'needs_approval', reason: null, proposed_execpolicy_amendment: ['cargo', 'build'] });
  const esc = decideInvocation(['echo', 'hello'], ctxOf('', { sandboxPermissions: 'require_escalated' }));
  assert.deepEqual(esc.subcommands[0].on_approval, UNSANDBOXED);
  const rm = sh('rm -rf /tmp/x', ctxOf(''));
  assert.equal(rm.subcommands[0].danger, 'ForcedRm');
  assert.ok(!rm.subcommands[0].available_decisions?.includes('approved_for_session'), 'no session approval for a dangerous command');
  const skill = decideInvocation(['/s/scripts/run.sh'], ctxOf('', { approvalPolicy: 'untrusted', skillScript: true }));
  assert.ok(skill.subcommands[0].available_decisions?.includes('approved_for_session'));
});

test('rule prompts and approval-policy rejections use Codex texts', () => {
  const rules = 'prefix_rule(pattern=["git", "push"], decision="prompt", justification="pushes are reviewed")';
  const a = sh('git push origin main', ctxOf(rules));
  assert.deepEqual(a.subcommands[0].requirement, {
    type: 'needs_approval',
    reason: '`git push origin main` requires approval: pushes are reviewed',
    proposed_execpolicy_amendment: null,
  });
  const never = sh('git push origin main', ctxOf(rules, { approvalPolicy: 'never' }));
  // Codex's text in the requirement; the denial adds what asked (the rule's justification)
  assert.equal(
    never.subcommands[0].requirement.type === 'forbidden' && never.subcommands[0].requirement.reason,
    'approval required by policy, but AskForApproval is set to Never',
  );
  assert.deepEqual(never.subcommands[0].action, {
    type: 'Deny',
    reason: 'approval required by policy, but AskForApproval is set to Never: `git push origin main` requires approval: pushes are reviewed',
  });
  // a code-loading variable that asked is named (it asks where an allow rule would take the command out of the sandbox)
  const gitStatus = 'prefix_rule(pattern=["git", "status"])\nprefix_rule(pattern=["make"])';
  const env = sh('GIT_PAGER="sh -c x" git status', ctxOf(gitStatus, { approvalPolicy: 'never' }));
  const act = env.subcommands[0].action;
  assert.match(act !== 'prompt' && act.type === 'Deny' ? act.reason : '', /Never: .*sets code-loading variables: GIT_PAGER$/);
  // shown as bash reads it back: an assignment as written, never quoted whole (a command named 'LD_PRELOAD=x')
  const quotedAssign = sh('GIT_PAGER="sh -c x" git status', ctxOf(gitStatus)).subcommands[0].requirement;
  assert.equal(quotedAssign.type === 'needs_approval' && quotedAssign.reason, '`GIT_PAGER="sh -c x" git status`: sets code-loading variables: GIT_PAGER');
  const plainAssign = sh('LD_PRELOAD=x make', ctxOf(gitStatus)).subcommands[0].requirement;
  assert.equal(plainAssign.type === 'needs_approval' && plainAssign.reason, '`LD_PRELOAD=x make`: sets code-loading variables: LD_PRELOAD');
  const gr: ApprovalPolicy = { reject: { sandbox_approval: false, rules: true, mcp_elicitations: false } };
  assert.deepEqual(sh('git push origin main', ctxOf(rules, { approvalPolicy: gr })).requirement, {
    type: 'forbidden',
    reason: 'approval required by policy rule, but AskForApproval::Granular.rules is false',
  });
});

test('hardened matching: a forbidden basename rule catches path spellings', () => {
  const ctx = ctxOf('prefix_rule(pattern=["rm"], decision="forbidden")\nhost_executable(name="rm", paths=["/usr/bin/rm"])');
  for (const c of [['/opt/x/rm', 'f'], ['./rm', 'f'], ['/usr/bin/rm', 'f']]) assert.equal(decideInvocation(c, ctx).decision, 'forbidden', c.join(' '));
});

test('the caller environment: code-loading variables turn an unsandboxed run into a prompt', () => {
  const rules = 'prefix_rule(pattern=["make"])';
  assert.deepEqual(sh('make', ctxOf(rules, { env: { PATH: '/usr/bin:/bin' } })).subcommands[0].action, UNSANDBOXED);
  const a = sh('make', ctxOf(rules, { env: { PATH: '/usr/bin:/bin', MAKEFLAGS: '-f evil.mk' } }));
  assert.equal(a.subcommands[0].action, 'prompt');
  assert.deepEqual(a.subcommands[0].on_approval, { type: 'Run' }, 'approved: it runs inside the sandbox (as requested: use_default)');
});

test('decideScript and a stable JSON shape', () => {
  const a = decideScript('/bin/bash', '-c', 'ls && pwd', ctxOf(''));
  assert.deepEqual(a.command, ['/bin/bash', '-c', 'ls && pwd']);
  assert.deepEqual(Object.keys(a), [
    'decision',
    'complex',
    'complex_reasons',
    'command',
    'requirement',
    'bypass_sandbox',
    'subcommands',
    'per_exec',
    'asked_up_front',
    'per_exec_sandbox',
    'sandbox_narrowed',
  ]);
  assert.deepEqual(JSON.parse(JSON.stringify(a)), a);
  for (const [i, s] of a.subcommands.entries()) assert.equal(s.index, i);
});

test('bad input: empty commands are forbidden; NUL, lone surrogates, deep nesting and 100,000 arguments do not crash', () => {
  const ctx = ctxOf('prefix_rule(pattern=["rm"], decision="forbidden")');
  assert.equal(decideInvocation([], ctx).decision, 'forbidden');
  assert.equal(decideInvocation([''], ctx).decision, 'forbidden');
  for (const script of ['\u0000rm x', 'rm \ud800 x', '$(('.repeat(1000), 'if then fi', '(((((' + 'ls'])
    assert.ok(['allow', 'prompt', 'forbidden'].includes(sh(script, ctx).decision), JSON.stringify(script));
  const many = ['rm', ...Array.from({ length: 100_000 }, (_, i) => `a${i}`)];
  assert.equal(decideInvocation(many, ctx).decision, 'forbidden');
  assert.equal(decideInvocation(['echo', ...many.slice(1)], ctx).decision, 'allow');
});

