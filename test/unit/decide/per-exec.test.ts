/** Per-exec decisions for complex scripts under untrusted (issue 17): what pre-flight still asks, what it
 * leaves to each exec. Real policies, real script analysis. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { decideScript, type DecideContext } from '../../../src/decide/script.js';
import { decideIntercepted } from '../../../src/decide/intercepted.js';
import { scriptRunByInterpreter } from '../../../src/decide/shebang.js';

const RULES = 'prefix_rule(pattern=["git", "status"])\nprefix_rule(pattern=["curl"], decision="prompt")\nprefix_rule(pattern=["shred"], decision="forbidden")';
const ctxOf = (over: Partial<DecideContext> = {}): DecideContext => ({
  policy: parsePolicy([{ path: '/r/default.rules', text: RULES }]),
  approvalPolicy: 'untrusted',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
  cwd: '/w',
  ...over,
});
const lc = (script: string, over: Partial<DecideContext> = {}) => decideScript('bash', '-lc', script, ctxOf(over));

test('a script complex only by its shape is decided per exec: nothing asked up front', () => {
  for (const s of [
    'git status 2>&1',
    'wc -l < README.md',
    'ls -la $(echo src)',
    'for f in *.md; do wc -l "$f"; done',
    'cat <<EOF\nx\nEOF',
    'git status 2>/dev/null || echo no',
    'git status >&2',
    'ls > /dev/null',
  ]) {
    const a = lc(s);
    assert.equal(a.per_exec, true, s);
    assert.equal(a.decision, 'allow', s);
    assert.deepEqual(a.asked_up_front, [], s);
    assert.equal(a.subcommands[0].decided_by.type === 'heuristic' && a.subcommands[0].decided_by.name, 'per-exec', s);
  }
});

test('file-writing redirections are asked up front as writes of those paths; other targets are harmless', () => {
  const a = lc('git status > status.txt; echo x >> /tmp/log; ls &> all.txt; ls >| f; ls 2>&1 >/dev/stderr');
  assert.equal(a.per_exec, true);
  assert.deepEqual(a.asked_up_front, [['write', '/w/status.txt'], ['write', '/tmp/log'], ['write', '/w/all.txt'], ['write', '/w/f']]);
  const w = a.subcommands.find((s) => s.kind === 'write')!;
  assert.equal(w.decision, 'prompt');
  assert.match(w.requirement.type === 'needs_approval' ? String(w.requirement.reason) : '', /`> status\.txt` at 1:12/);
  assert.deepEqual(w.on_approval, { type: 'Run' });
});

test('what pre-flight can decide still is: forbidden literal, prompt rule, danger; a write it cannot name keeps the whole-script prompt', () => {
  assert.equal(lc('for f in a; do shred "$f"; done').decision, 'forbidden');
  const p = lc('x=$(curl -s https://x.invalid)');
  assert.equal(p.per_exec, true);
  assert.deepEqual(p.asked_up_front, [['curl', '-s', 'https://x.invalid']]);
  const d = lc('for f in a; do rm -rf /; done');
  assert.ok(d.asked_up_front.some((c) => c[0] === 'rm'), 'danger asked up front');
  assert.equal(lc('eval "$x"').decision, 'prompt', 'an eval of what is only known at run time is asked before anything runs');
  for (const s of ['echo x > "$f"', 'echo x > ~/.bashrc', '$cmd -rf x']) {
    const a = lc(s);
    assert.equal(a.per_exec, false, s);
    assert.equal(a.subcommands[0].action, 'prompt', s);
  }
});

test("Codex's heredoc fallback is asked up front as its command, like Codex: the interpreter runs code no exec shows", () => {
  const a = lc("python3 <<'PY'\nprint('hello')\nPY");
  assert.equal(a.per_exec, false);
  assert.equal(a.decision, 'prompt');
  assert.deepEqual(a.asked_up_front, [['python3']]);
  // a heredoc to a program that is safe on its own is asked only because it is complex: decided per exec
  assert.equal(lc("cat <<'EOF'\nx\nEOF").per_exec, true);
});

test('only under untrusted with a restricted turn sandbox and no escalation request', () => {
  assert.equal(lc('git status 2>&1', { approvalPolicy: 'on-request' }).per_exec, false);
  assert.equal(lc('git status 2>&1', { sandboxPolicy: parseSandboxPolicy('danger-full-access') }).per_exec, false);
  assert.equal(lc('git status 2>&1', { sandboxPermissions: 'require_escalated' }).per_exec, false);
  assert.equal(lc('git status 2>&1', { sandboxPolicy: parseSandboxPolicy('read-only') }).per_exec, true);
});

test('wrappers with a known grammar are judged as their command; read-only builtins run; sudo is not seen through', () => {
  assert.equal(lc('timeout 30 git status').decision, 'allow');
  assert.equal(lc('nice -n 10 git status').decision, 'allow');
  assert.equal(lc('env LC_ALL=C git status').decision, 'allow');
  assert.equal(lc('timeout 30 curl x').decision, 'prompt');
  assert.equal(lc('sudo git status').decision, 'prompt');
  assert.equal(lc('test -f package.json && echo yes').decision, 'allow');
  assert.equal(lc('[ -d src ]').decision, 'allow');
  // shell options and variables: nothing outside the shell; the commands after them are still decided
  assert.equal(lc('set -euo pipefail; git status').decision, 'allow');
  assert.equal(lc('set -e; unset GREP_OPTIONS; ls').decision, 'allow');
  assert.equal(lc('set -e; curl x').decision, 'prompt');
  assert.deepEqual(lc('set -e; curl x').asked_up_front, [['curl', 'x']]);
  assert.equal(lc('timeout 30 git status').per_exec, false);
  // at exec time too: the wrapper runs in place, its inner command is decided at its own exec
  const ctx = ctxOf();
  const t = decideIntercepted('/usr/bin/timeout', ['timeout', '30', 'git', 'status'], '/w', ctx);
  assert.deepEqual(t.action, { type: 'Run' });
  assert.equal(t.decided_by.type === 'heuristic' && t.decided_by.name, 'wrapper');
  assert.equal(decideIntercepted('/usr/bin/timeout', ['timeout', '30', 'rm', 'x'], '/w', ctx).action, 'prompt');
  // known-safe by name when the program is in a folder only root writes, not elsewhere
  assert.deepEqual(decideIntercepted('/usr/bin/cat', ['cat', 'x'], '/w', ctx).action, { type: 'Run' });
  assert.equal(decideIntercepted('/w/cat', ['cat', 'x'], '/w', ctx).action, 'prompt');
});

test('an interpreter running a system script of its own kind is judged as the script', () => {
  const shebang = (p: string) => (p === '/usr/bin/npm' ? '/usr/bin/env node' : p === '/usr/bin/py' ? '/usr/bin/python3 -S' : null);
  assert.deepEqual(scriptRunByInterpreter('/usr/bin/node', ['node', '/usr/bin/npm', 'test'], shebang), ['/usr/bin/npm', 'test']);
  assert.equal(scriptRunByInterpreter('/usr/bin/python3', ['python3', '/usr/bin/npm', 'test'], shebang), null, 'another interpreter');
  assert.equal(scriptRunByInterpreter('/usr/bin/python3', ['python3', '/usr/bin/py'], shebang), null, 'options in the #! line');
  assert.equal(scriptRunByInterpreter('/usr/bin/node', ['node', '/w/npm', 'test'], () => '/usr/bin/env node'), null, 'a script the caller could write');
});
