import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { approvalCall } from '../../src/client/approval-client.js';
import { request } from '../../src/transport/client.js';
import { approveConsole, preflight, runGate, runShell } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

function withRules(text: string) {
  const te = tempEnv();
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  const file = join(te.env.GATE_HOME, 'rules', 'team.rules');
  writeFileSync(file, text);
  return { te, file };
}

const RULES = `prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")
prefix_rule(pattern=["git", "push"], decision="prompt")
prefix_rule(pattern=["make"], decision="allow")
`;

test('per subcommand: a forbidden one anywhere denies the script without asking; prompts get one approval id each', async () => {
  const { te, file } = withRules(RULES);
  const d = await startDaemon({ te, args: ['--approval-policy', 'on-request'] });
  const c = await approveConsole(te.env, 'ci');
  try {
    const f = await preflight(d.paths, 'git push && make && rm -rf build');
    assert.equal(f.action.type, 'Deny');
    assert.deepEqual(f.subcommands.map((s: any) => [s.argv.join(' '), s.decision, s.action.type]), [
      ['git push', 'prompt', 'Deny'],
      ['make', 'allow', 'Run'],
      ['rm -rf build', 'forbidden', 'Deny'],
    ]);
    assert.match(f.subcommands[2].action.reason, /use trash/);
    assert.deepEqual(f.subcommands[2].source[0], { kind: 'rule', file, line: 1, pattern: ['rm'], justification: 'use trash' });
    assert.equal(c.events.filter((e) => e.type === 'prompt').length, 0, 'nobody was asked');

    const two = preflight(d.paths, 'git push origin a; git push origin b');
    const pa = await c.next('prompt');
    const pb = await c.next('prompt');
    assert.notEqual(pa.approval_id, pb.approval_id);
    assert.equal(pa.matched_rule, `${file}:2`);
    c.answer(pa.approval_id, 'approved');
    c.answer(pb.approval_id, 'denied');
    const r = await two;
    assert.deepEqual(r.action, { type: 'Deny', reason: 'User denied execution' });
    assert.deepEqual(r.subcommands.map((s: any) => s.approval_id), [pa.approval_id, pb.approval_id]);
  } finally {
    await c.close();
    await d.stop();
    te.cleanup();
  }
});

test('approved_execpolicy_amendment appends the rule and the next identical command is allowed without a prompt', async () => {
  const { te } = withRules(RULES);
  const d = await startDaemon({ te, args: ['--approval-policy', 'untrusted'] });
  const c = await approveConsole(te.env, 'amend');
  try {
    const first = preflight(d.paths, 'cargo build --release');
    const p = await c.next('prompt');
    assert.deepEqual(p.proposed_execpolicy_amendment, ['cargo', 'build', '--release']);
    assert.equal(p.amendment_rule, 'prefix_rule(pattern=["cargo", "build", "--release"], decision="allow")');
    c.answer(p.approval_id, 'approved_execpolicy_amendment');
    assert.equal((await first).subcommands[0].source.at(-1).answer, 'approved_execpolicy_amendment');
    const rules = readFileSync(join(te.env.CODEX_HOME, 'rules', 'default.rules'), 'utf8');
    assert.equal(rules, 'prefix_rule(pattern=["cargo", "build", "--release"], decision="allow")\n');
    const next = await preflight(d.paths, 'cargo build --release');
    assert.equal(next.subcommands[0].decision, 'allow');
    assert.equal(next.subcommands[0].source[0].kind, 'rule');
    assert.equal(c.events.filter((e) => e.type === 'prompt').length, 1);
  } finally {
    await c.close();
    await d.stop();
    te.cleanup();
  }
});

test('hot reload: an edit takes effect; a broken edit refuses runs (fail closed) and shows in status and the log', async () => {
  const { te, file } = withRules('prefix_rule(pattern=["make"], decision="allow")\n');
  const d = await startDaemon({ te, args: ['--approval-policy', 'never', '--sandbox', 'danger-full-access'] });
  try {
    assert.equal((await preflight(d.paths, 'make')).subcommands[0].decision, 'allow');
    writeFileSync(file, 'prefix_rule(pattern=["make"], decision="forbidden")\n');
    await waitFor(async () => (await preflight(d.paths, 'make')).subcommands[0].decision === 'forbidden' || undefined, 'the reload');
    writeFileSync(file, 'prefix_rule(pattern=["make"], decision="allow"\n'); // missing ')'
    const st = await waitFor(async () => {
      const s = (await approvalCall(d.paths, 'status')).status as any;
      return s.policy.last_reload_error ? s : undefined;
    }, 'the reload error');
    assert.match(st.policy.last_reload_error.message, new RegExp(`^${file}:1:12: .*unclosed`));
    // issue 32: a broken file refuses every run with its file:line:col until it is fixed
    await assert.rejects(preflight(d.paths, 'make'), new RegExp(`a rules or config file is broken: ${file}:1:12: `));
    const human = await runGate(te.env, ['status']);
    assert.match(human.stdout, /reload error: +.*team\.rules:1:12.*runs are refused until it is fixed/);
    assert.match(d.output(), /policy reload failed: runs are refused until it is fixed: .*team\.rules:1:12/);
    writeFileSync(file, 'prefix_rule(pattern=["make"], decision="prompt")\n');
    await waitFor(async () => (((await approvalCall(d.paths, 'status')).status as any).policy.last_reload_error === null ? true : undefined), 'recovery');
  } finally {
    await d.stop();
    te.cleanup();
  }
});

test('a broken rule file at start: the daemon refuses with the located error', async () => {
  const { te, file } = withRules('prefix_rule(pattern=["x"], decision="maybe")\n');
  try {
    const r = await runGate(te.env, ['daemon', 'run', '--no-terminal']);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.startsWith(`gate: ${file}:1:`), r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  } finally {
    te.cleanup();
  }
});

test('config: file, environment and flags layer; gate config set changes the live daemon', async () => {
  const te = tempEnv();
  mkdirSync(te.env.GATE_HOME, { recursive: true });
  writeFileSync(
    join(te.env.GATE_HOME, 'config.toml'),
    'approval_policy = "untrusted"\nsandbox_mode = "workspace-write"\napproval_timeout_ms = 5000\n[sandbox_workspace_write]\nwritable_roots = ["/srv"]\nnetwork_access = true\n',
  );
  const d = await startDaemon({ te, env: { GATE_APPROVAL_TIMEOUT_MS: '7000' }, args: ['--approval-policy', 'on-request'] });
  try {
    const get = await runGate(te.env, ['config', 'get', '--json']);
    const cfg = JSON.parse(get.stdout);
    assert.equal(cfg.approval_policy, 'on-request'); // flag over file
    assert.equal(cfg.approval_timeout_ms, 7000); // env over file
    assert.deepEqual(cfg.sandbox_workspace_write, { writable_roots: ['/srv'], network_access: true, exclude_tmpdir_env_var: false, exclude_slash_tmp: false });
    const pf = await preflight(d.paths, 'true');
    assert.deepEqual(pf.sandbox, {
      type: 'workspace-write',
      writable_roots: ['/srv'],
      network_access: true,
      exclude_tmpdir_env_var: false,
      exclude_slash_tmp: false,
    });
    const set = await runGate(te.env, ['config', 'set', 'approval_policy', 'never']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal((await runGate(te.env, ['config', 'get', 'approval_policy'])).stdout, 'never\n');
    await runGate(te.env, ['config', 'set', 'sandbox_mode', 'danger-full-access']);
    assert.deepEqual((await preflight(d.paths, 'true')).sandbox, { type: 'danger-full-access' });
    const bad = await runGate(te.env, ['config', 'set', 'approval_policy', 'sometimes']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /gate: config set by .*'approval_policy': invalid approval policy "sometimes"/);
    const audit = readFileSync(join(te.env.GATE_HOME, 'audit.jsonl'), 'utf8');
    assert.match(audit, /"kind":"config".*approval_policy = never/);
  } finally {
    await d.stop();
    te.cleanup();
  }
});

test('exec requests reuse what pre-flight settled for the run; escalations carry a one-time token', async () => {
  const { te } = withRules(RULES);
  const d = await startDaemon({ te, args: ['--approval-policy', 'untrusted'] });
  const c = await approveConsole(te.env, 'exec');
  const shell = runShell();
  try {
    const pf = preflight(d.paths, 'cargo test');
    c.answer((await c.next('prompt')).approval_id, 'approved');
    const run = await pf;
    assert.equal(run.action.type, 'Run');
    const exec = (argv: string[]) =>
      // host_pid: the asker as the daemon sees it, the run's own shell (the model's command: issue 29)
      request(d.paths, { type: 'exec', run_id: run.run_id, program: `/usr/bin/${argv[0]}`, argv, cwd: '/tmp', pid: process.pid, host_pid: shell.pid }) as Promise<any>;
    assert.deepEqual((await exec(['cargo', 'test'])).action, { type: 'Run' });
    const allowed = await exec(['make', 'all']);
    assert.deepEqual(allowed.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
    assert.equal(typeof allowed.escalation_token, 'string');
    // the exec-time denial carries the rule's justification and where the rule is, as pre-flight does
    assert.deepEqual((await exec(['rm', '-f', 'x'])).action, {
      type: 'Deny',
      reason: `Execution forbidden by policy: use trash (rule ${join(te.env.GATE_HOME, 'rules', 'team.rules')}:1)`,
    });
    assert.equal(c.events.filter((e) => e.type === 'prompt').length, 1, 'pre-flight answer reused');
  } finally {
    shell.stop();
    await c.close();
    await d.stop();
    te.cleanup();
  }
});
