/** `gate explain` as a real process: JSON shape, human output, rule loading, located errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv, GATE } from '../helpers/env.js';

function gate(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [GATE, 'explain', ...args], { env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('--json: overall decision, complex flag, subcommands in script order with argv and decision', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  const rules = join(te.dir, 'x.rules');
  writeFileSync(rules, 'prefix_rule(pattern=["git", "status"])\n\nprefix_rule(pattern=["rm"], decision="forbidden")\n');
  // default rule folder is read too
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(join(te.env.GATE_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["npm", "test"], decision="prompt")\n');
  const r = gate(['--rules', rules, '--json', '--', 'bash', '-lc', "git status && npm test | \\rm -f 'a b'"], te.env);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.decision, 'forbidden');
  assert.equal(j.complex, false);
  assert.deepEqual(j.subcommands.map((s: { argv: string[] }) => s.argv), [['git', 'status'], ['npm', 'test'], ['rm', '-f', 'a b']]);
  assert.deepEqual(j.subcommands.map((s: { decision: string }) => s.decision), ['allow', 'prompt', 'forbidden']);
  assert.deepEqual([j.subcommands[0].decided_by.file, j.subcommands[0].decided_by.line], [rules, 1]);
  assert.deepEqual([j.subcommands[2].decided_by.file, j.subcommands[2].decided_by.line], [rules, 3]);
  assert.equal(j.subcommands[1].decided_by.file, join(te.env.GATE_HOME, 'rules', 'default.rules'));
  assert.deepEqual(j.context.rule_files, [join(te.env.GATE_HOME, 'rules', 'default.rules'), rules]);

  // a bare script string is `bash -lc <script>`; complex scripts list why and their literal commands
  const c = JSON.parse(gate(['--json', '--approval-policy', 'untrusted', 'for f in *; do rm -rf "$f"; done'], te.env).out);
  assert.equal(c.complex, true);
  assert.deepEqual(c.command, ['bash', '-lc', 'for f in *; do rm -rf "$f"; done']);
  assert.equal(c.decision, 'prompt');
  assert.ok(c.complex_reasons.length > 0);
  assert.ok(c.subcommands.some((s: { kind: string; argv: string[] }) => s.kind === 'literal' && s.argv[0] === 'rm'));

  // gate-sh itself (or a shell at another path) is explained as the script it runs
  for (const sh of ['gate-sh', '/opt/bin/bash']) {
    const g = JSON.parse(gate(['--rules', rules, '--json', '--', sh, '-c', 'git status && rm x'], te.env).out);
    assert.deepEqual(g.subcommands.map((s: { argv: string[] }) => s.argv), [['git', 'status'], ['rm', 'x']], sh);
    assert.equal(g.decision, 'forbidden');
  }
});

test('human output: words, rule file:line or heuristic, decision, action, execution and amendment', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  const rules = join(te.dir, 'y.rules');
  writeFileSync(rules, 'prefix_rule(pattern=["cat"])\n');
  const r = gate(['--rules', rules, '--approval-policy', 'untrusted', '--sandbox', 'read-only', '--', 'bash', '-lc', 'cat README && cargo build'], te.env);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /\[1\] cat README/);
  assert.match(r.out, new RegExp(`rule ${rules.replace(/[.]/g, '\\.')}:1 +prefix cat → allow`));
  assert.match(r.out, /\[2\] cargo build/);
  assert.match(r.out, /heuristic approval-policy → prompt/);
  assert.match(r.out, /action +prompt \(TurnDefault\); if approved: Run/);
  assert.match(r.out, /amendment +prefix_rule\(pattern=\["cargo", "build"\], decision="allow"\)/);
  assert.match(r.out, /decision: prompt/);
});

test('bad input: a broken rule file is a located error (exit 1), bad flags exit 2, no stack traces', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  const bad = join(te.dir, 'bad.rules');
  writeFileSync(bad, 'prefix_rule(pattern=["ok"])\nprefix_rule(pattern=["x"], decision="maybe")\n');
  const r = gate(['--rules', bad, 'ls'], te.env);
  assert.equal(r.code, 1);
  assert.match(r.err, new RegExp(`^gate: ${bad.replace(/[.]/g, '\\.')}:2:\\d+: .*invalid decision: maybe`));
  assert.equal(r.out, '');
  for (const args of [
    ['--approval-policy', 'sometimes', 'ls'],
    ['--sandbox', 'nope', 'ls'],
    ['--bogus', 'ls'],
    [],
    ['--prefix-rule', '{', 'ls'],
    ['--sandbox-permissions', 'all', 'ls'],
  ]) {
    const b = gate(args, te.env);
    assert.equal(b.code, 2, `${args.join(' ')}: ${b.err}`);
    assert.match(b.err, /^gate: explain: /);
    assert.doesNotMatch(b.err, /\n\s+at /);
  }
});

test('defaults come from the session configuration (config.toml, GATE_* variables); flags override', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  mkdirSync(te.env.GATE_HOME, { recursive: true });
  const extra = join(te.dir, 'cfg.rules');
  writeFileSync(extra, 'prefix_rule(pattern=["make"], decision="forbidden")\n');
  writeFileSync(join(te.env.GATE_HOME, 'config.toml'), `approval_policy = "untrusted"\nsandbox_mode = "read-only"\nrules = [${JSON.stringify(extra)}]\n`);
  const j = JSON.parse(gate(['--json', 'cargo build; make'], te.env).out);
  assert.equal(j.context.approval_policy, 'untrusted');
  assert.equal(j.context.sandbox_policy.type, 'read-only');
  assert.deepEqual(j.subcommands.map((s: { decision: string }) => s.decision), ['prompt', 'forbidden']);
  const o = JSON.parse(gate(['--json', '--approval-policy', 'never', 'cargo build'], te.env).out);
  assert.equal(o.context.approval_policy, 'never');
  assert.equal(o.decision, 'allow');
  const env = { ...te.env, GATE_APPROVAL_POLICY: 'on-request' };
  assert.equal(JSON.parse(gate(['--json', 'cargo build'], env).out).context.approval_policy, 'on-request');
  writeFileSync(join(te.env.GATE_HOME, 'config.toml'), 'approval_policy = [\n');
  const bad = gate(['ls'], te.env);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /^gate: .*config\.toml:\d+:\d+: /);
});


test('a script decided per exec (issue 17): explain and --json say so and list what is asked up front; on-request does not', (t) => {
  const te = tempEnv();
  t.after(te.cleanup);
  const strict = ['--no-default-rules', '--approval-policy', 'untrusted', '--sandbox', 'workspace-write'];
  const loop = 'for f in *.md; do wc -l "$f"; done';
  // complex only by its shape: decided per exec, nothing asked up front, run read-only
  const j = JSON.parse(gate([...strict, '--json', '--', 'bash', '-lc', loop], te.env).out);
  assert.equal(j.per_exec, true);
  assert.deepEqual(j.asked_up_front, []);
  assert.equal(j.decision, 'allow');
  const h = gate([...strict, '--', 'bash', '-lc', loop], te.env);
  assert.equal(h.code, 0, h.err);
  assert.match(h.out, /\ndecided per exec: every program it starts is judged when it starts .*\nsandbox: read-only, stricter than the turn's .*even when the script exits 0\)\nasked up front: nothing\n/);
  // the whole-script entry says where it really runs (not `Run (TurnDefault)`), and --json says the same
  assert.match(h.out, /\n\[1\] bash -lc .*\(whole script\)\n(    .*\n)*?    action       Run \(in a read-only sandbox; every exec decided when it starts\)\n\[2\]/);
  assert.doesNotMatch(h.out.split('\n[2]')[0], /TurnDefault/);
  assert.deepEqual(j.per_exec_sandbox, { type: 'read-only' });
  assert.equal(j.sandbox_narrowed, true);
  assert.equal(j.subcommands[0].kind, 'script');
  assert.deepEqual(j.subcommands[0].sandbox, j.per_exec_sandbox);
  // a read-only turn: the same read-only sandbox, not stricter than the turn's
  const ro = JSON.parse(gate(['--no-default-rules', '--approval-policy', 'untrusted', '--sandbox', 'read-only', '--json', '--', 'bash', '-lc', loop], te.env).out);
  assert.deepEqual([ro.per_exec, ro.per_exec_sandbox, ro.sandbox_narrowed], [true, { type: 'read-only' }, false]);
  // a file-writing redirection is asked up front as a write of that path; /dev/null is no write
  const cwd = join(te.dir, 'w');
  mkdirSync(cwd);
  const w = spawnSync(process.execPath, [GATE, 'explain', ...strict, '--json', '--', 'bash', '-lc', `${loop} > counts.txt 2>/dev/null`], {
    env: te.env,
    cwd,
    encoding: 'utf8',
  });
  const wj = JSON.parse(w.stdout);
  assert.equal(wj.per_exec, true);
  assert.deepEqual(wj.asked_up_front, [['write', join(cwd, 'counts.txt')]]);
  assert.equal(wj.decision, 'prompt');
  const wh = spawnSync(process.execPath, [GATE, 'explain', ...strict, '--', 'bash', '-lc', `${loop} > counts.txt`], { env: te.env, cwd, encoding: 'utf8' });
  assert.match(wh.stdout, /\ndecided per exec: .*\nsandbox: the turn sandbox once the writes below are approved\nasked up front: write \S+\/w\/counts\.txt\n/);
  assert.match(wh.stdout, /\n    action       Run \(in the turn sandbox, workspace-write, once the writes are approved; every exec decided when it starts\)\n/);
  assert.deepEqual([wj.per_exec_sandbox.type, wj.sandbox_narrowed, wj.subcommands[0].sandbox.type], ['workspace-write', false, 'workspace-write']);
  // what pre-flight can decide still is: a dangerous command is asked up front, as itself
  const rm = JSON.parse(gate([...strict, '--json', '--', 'bash', '-lc', 'for f in *.md; do rm -rf "$f"; done'], te.env).out);
  assert.ok(rm.asked_up_front.some((c: string[]) => c[0] === 'rm'), JSON.stringify(rm.asked_up_front));
  // on-request: not per exec (Codex's heuristic already lets a complex script run sandboxed, unasked)
  const onRequest = gate(['--no-default-rules', '--approval-policy', 'on-request', '--sandbox', 'workspace-write', '--', 'bash', '-lc', loop], te.env);
  assert.doesNotMatch(onRequest.out, /decided per exec/);
  assert.match(onRequest.out, /\nasked up front: nothing\n/);
  const oj = JSON.parse(gate(['--no-default-rules', '--approval-policy', 'on-request', '--json', loop], te.env).out);
  assert.deepEqual([oj.per_exec, oj.per_exec_sandbox, oj.sandbox_narrowed, oj.subcommands[0].sandbox], [false, null, false, undefined]);
});
