/**
 * The daemon's network decider (src/daemon/network-decider.ts) as the proxy calls it: a real daemon in this
 * process, runs made by real pre-flight requests, a real `gate approve --json` approver. Rules and config
 * lists decide without asking; a new host is asked with the run's command and cwd; "approved" lasts for
 * the run (a second run asks again; run-finished ends it), "for the session" for every run, a saved
 * network_rule survives a restart; with no approver the connection is refused at once. Every decision and
 * close is an audit record that `gate log --kind network --decision ...` finds. No connection is made.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, tempEnv } from '../helpers/env.js';
import { killAll, waitFor } from '../helpers/daemon.js';
import { approver, netRig } from './network-rig.js';
import { defaultRulesFile, loadPolicy } from '../../src/rules/index.js';

after(killAll);

const RULES = [
  'network_rule(host="allowed.test", protocol="https", decision="allow")',
  'network_rule(host="forbidden.test", protocol="https", decision="deny", justification="not this one")',
  'network_rule(host="local.test", protocol="http", decision="allow")',
].join('\n');
const CONFIG = '[network]\nallowed_domains = ["**.mirror.test"]\ndenied_domains = ["bad.mirror.test"]\n';

const auditLines = (env: Record<string, string>): Record<string, any>[] =>
  readFileSync(join(env.GATE_HOME, 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

function gateLog(env: Record<string, string>, ...args: string[]): Record<string, any>[] {
  const r = spawnSync(process.execPath, [GATE, 'log', '--json', ...args], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('rules and config lists decide without asking; denials say why; every decision and close is audited and filtered by gate log', { timeout: 60_000 }, async () => {
  const rig = await netRig({ rules: RULES, config: CONFIG });
  try {
    const run = await rig.run('npm install');
    const ok = await rig.decide(run, 'allowed.test');
    assert.deepEqual([ok.decision, ok.source], ['allow', 'rule']);
    assert.match(ok.rule ?? '', /team\.rules:1$/);
    const no = await rig.decide(run, 'forbidden.test');
    assert.deepEqual([no.decision, no.source], ['deny', 'rule']);
    assert.match(no.reason, /network_rule forbids forbidden\.test \(.*team\.rules:2\): not this one/);
    assert.equal((await rig.decide(run, 'pkg.mirror.test')).decision, 'allow');
    const bad = await rig.decide(run, 'bad.mirror.test');
    assert.deepEqual([bad.decision, bad.source], ['deny', 'config']);
    // a name the proxy resolved to loopback: refused unless named exactly (local.test is, by a rule)
    const rebound = await rig.decide(run, 'pkg.mirror.test', 443, 'https', ['127.0.0.1']);
    assert.deepEqual([rebound.decision, rebound.source], ['deny', 'policy']);
    assert.match(rebound.reason, /resolves to 127\.0\.0\.1, a loopback address/);
    const local = await rig.decide(run, 'local.test', 8080, 'http', ['127.0.0.3']);
    assert.deepEqual([local.decision, local.namesHost], ['allow', true]);
    rig.daemon.networkDecider.closed({
      request: { runId: run, host: 'allowed.test', port: 443, protocol: 'https', addresses: [] },
      decided: ok,
      bytesUp: 120,
      bytesDown: 4096,
      durationMs: 7,
    });
    await waitFor(() => auditLines(rig.te.env).some((r) => r.kind === 'network' && r.detail === 'closed'), 'the close record');
    const net = auditLines(rig.te.env).filter((r) => r.kind === 'network');
    assert.equal(net.length, 7);
    const first = net[0];
    assert.deepEqual(
      [first.host, first.port, first.protocol, first.decision, first.source, first.run_id],
      ['allowed.test', 443, 'https', 'allow', 'rule', run],
    );
    assert.deepEqual(first.argv, ['bash', '-c', 'npm install']);
    const closed = net.find((r) => r.detail === 'closed')!;
    assert.deepEqual([closed.bytes_up, closed.bytes_down, closed.duration_ms, closed.decision], [120, 4096, 7, 'allow']);
    // gate log filters them
    const denied = gateLog(rig.te.env, '--kind', 'network', '--decision', 'deny');
    assert.deepEqual(
      denied.map((r) => r.host),
      ['forbidden.test', 'bad.mirror.test', 'pkg.mirror.test'],
    );
    assert.equal(gateLog(rig.te.env, '--kind', 'network', '--decision', 'allow').length, 4);
    const table = spawnSync(process.execPath, [GATE, 'log', '--kind', 'network', '--decision', 'deny'], { env: rig.te.env, encoding: 'utf8' }).stdout;
    assert.match(table, /network .* deny .* rule .* https forbidden\.test:443: a network_rule forbids/);
  } finally {
    await rig.stop();
    rig.te.cleanup();
  }
});

test('a new host is asked with the run command and cwd; approved is for this run only, and ends with the run', { timeout: 60_000 }, async () => {
  const rig = await netRig();
  const a = await approver(rig.te.env, () => 'approved');
  try {
    const run1 = await rig.run('npm install');
    const v = await rig.decide(run1, 'registry.test', 443, 'https');
    assert.deepEqual([v.decision, v.source], ['allow', 'approval']);
    assert.equal(a.prompts.length, 1);
    const p = a.prompts[0];
    assert.equal(p.origin, 'network');
    assert.equal(p.run_id, run1);
    assert.deepEqual(p.command, ['bash', '-c', 'npm install']);
    assert.equal(p.display, "bash -c 'npm install'");
    assert.equal(p.cwd, join(rig.te.dir, 'ws'));
    assert.deepEqual(p.network_approval_context, { host: 'registry.test', protocol: 'https' });
    assert.equal(p.network_port, 443);
    assert.deepEqual(p.proposed_network_policy_amendments, [{ host: 'registry.test', action: 'allow' }]);
    assert.equal(p.amendment_rule, 'network_rule(host="registry.test", protocol="https", decision="allow")');
    assert.deepEqual(p.available_decisions, [
      'approved',
      'approved_for_session',
      { network_policy_amendment: { network_policy_amendment: { host: 'registry.test', action: 'allow' } } },
      'denied',
      'abort',
    ]);
    // the same run again: not asked
    const again = await rig.decide(run1, 'registry.test', 443, 'https');
    assert.deepEqual([again.decision, again.source], ['allow', 'granted-run']);
    // another port is another host:port
    await rig.decide(run1, 'registry.test', 8443, 'https');
    assert.equal(a.prompts.length, 2);
    // a second run asks again, and is refused when the person says no
    const run2 = await rig.run('pip install x');
    a.answer = () => 'denied';
    const v2 = await rig.decide(run2, 'registry.test', 443, 'https');
    assert.deepEqual([v2.decision, v2.reason], ['deny', 'User denied the connection']);
    assert.equal(a.prompts.length, 3);
    assert.deepEqual(a.prompts[2].command, ['bash', '-c', 'pip install x']);
    // a refusal holds for the rest of that run: its retry is not asked again
    assert.equal((await rig.decide(run2, 'registry.test', 443, 'https')).decision, 'deny');
    assert.equal(a.prompts.length, 3);
    // run-finished ends run1's grant: asked again (and now refused)
    await rig.finish(run1);
    const after1 = await rig.decide(run1, 'registry.test', 443, 'https');
    assert.equal(after1.decision, 'deny');
    assert.equal(a.prompts.length, 4);
  } finally {
    await a.close();
    await rig.stop();
    rig.te.cleanup();
  }
});

test('concurrent connections of one run to one host:port share one prompt', { timeout: 60_000 }, async () => {
  const rig = await netRig();
  const a = await approver(rig.te.env, () => 'approved');
  try {
    const run = await rig.run('npm install');
    const vs = await Promise.all([1, 2, 3, 4].map(() => rig.decide(run, 'registry.test')));
    assert.deepEqual(
      vs.map((v) => v.decision),
      ['allow', 'allow', 'allow', 'allow'],
    );
    assert.equal(a.prompts.length, 1);
  } finally {
    await a.close();
    await rig.stop();
    rig.te.cleanup();
  }
});

test('approved for the session: a second run is not asked', { timeout: 60_000 }, async () => {
  const rig = await netRig();
  const a = await approver(rig.te.env, () => 'approved_for_session');
  try {
    const run1 = await rig.run('npm install');
    assert.equal((await rig.decide(run1, 'registry.test')).decision, 'allow');
    await rig.finish(run1);
    const run2 = await rig.run('npm ci');
    const v = await rig.decide(run2, 'registry.test');
    assert.deepEqual([v.decision, v.source], ['allow', 'granted-session']);
    assert.equal(a.prompts.length, 1);
  } finally {
    await a.close();
    await rig.stop();
    rig.te.cleanup();
  }
});

test('saved as a network_rule: the default rules file gains it, it parses, and a restarted daemon allows without asking', { timeout: 90_000 }, async () => {
  const te = tempEnv();
  const rig = await netRig({ te });
  const a = await approver(te.env, () => 'network_policy_amendment');
  try {
    const run = await rig.run('npm install');
    const v = await rig.decide(run, 'registry.test', 443, 'https');
    assert.deepEqual([v.decision, v.reason], ['allow', 'approved and saved as a network_rule']);
    const file = defaultRulesFile(te.env);
    assert.equal(readFileSync(file, 'utf8'), 'network_rule(host="registry.test", protocol="https", decision="allow")\n');
    assert.deepEqual(loadPolicy({ env: te.env, extraFiles: [] }).networkDomains().allowed, ['registry.test']);
    // the reloaded policy allows it in this daemon already, for another run
    const run2 = await rig.run('npm ci');
    const now = await rig.decide(run2, 'registry.test', 443, 'https');
    assert.deepEqual([now.decision, now.source], ['allow', 'rule']);
    assert.equal(a.prompts.length, 1);
  } finally {
    await a.close();
    await rig.stop();
  }
  // a new daemon, no approver attached: the saved rule allows at once
  const again = await netRig({ te });
  try {
    const run = await again.run('npm install');
    const v = await again.decide(run, 'registry.test', 443, 'https');
    assert.deepEqual([v.decision, v.source], ['allow', 'rule']);
    assert.match(v.rule ?? '', /default\.rules:1$/);
  } finally {
    await again.stop();
    te.cleanup();
  }
});

test('headless: a new host is refused at once, saying how to attach an approver', { timeout: 60_000 }, async () => {
  // a long approval timeout: the refusal must not come from waiting it out
  const rig = await netRig({ config: 'approval_timeout_ms = 600000\n' });
  try {
    const run = await rig.run('npm install');
    const v = await rig.decide(run, 'registry.test', 443, 'https');
    assert.deepEqual([v.decision, v.source], ['deny', 'approval']);
    assert.equal(v.reason, "approval needed but no approver is attached (run 'gate approve'): no network_rule or allowed_domains entry allows registry.test");
    await waitFor(() => auditLines(rig.te.env).some((r) => r.kind === 'network' && r.approver === 'daemon' && r.answer === 'denied'), 'the audit record');
    // with the approval policy "never", nobody would be asked either: refused with that reason
    rig.daemon.setConfig('approval_policy', 'never', 'test');
    const never = await rig.decide(run, 'other.test');
    assert.match(never.reason, /approval_policy "never" asks nobody/);
  } finally {
    await rig.stop();
    rig.te.cleanup();
  }
});

test('a broken rules file refuses every connection until it is fixed', { timeout: 60_000 }, async () => {
  const rig = await netRig({ rules: RULES });
  try {
    const run = await rig.run('npm install');
    assert.equal((await rig.decide(run, 'allowed.test')).decision, 'allow');
    writeFileSync(join(rig.te.env.GATE_HOME, 'rules', 'team.rules'), `${RULES}\nnetwork_rule(host="*.test", protocol="https", decision="allow")\n`);
    assert.ok(rig.daemon.reloadPolicy('test'));
    const v = await rig.decide(run, 'allowed.test');
    assert.equal(v.decision, 'deny');
    assert.match(v.reason, /rules or config file is broken: .*wildcards are not allowed/);
  } finally {
    await rig.stop();
    rig.te.cleanup();
  }
});

test('a connection that goes away while asked withdraws its prompt', { timeout: 60_000 }, async () => {
  const rig = await netRig();
  const a = await approver(rig.te.env, () => undefined); // shown the prompt, never answers
  try {
    const run = await rig.run('npm install');
    const gone = new AbortController();
    const decided = rig.daemon.networkDecider.decide({ runId: run, host: 'registry.test', port: 443, protocol: 'https', addresses: [] }, gone.signal);
    await waitFor(() => a.prompts.length === 1, 'the prompt');
    assert.equal(rig.daemon.broker.pendingPrompts().length, 1);
    gone.abort();
    const v = await decided;
    assert.deepEqual([v.decision, v.reason], ['deny', 'the connection went away before the approval was answered']);
    assert.equal(rig.daemon.broker.pendingPrompts().length, 0);
  } finally {
    await a.close();
    await rig.stop();
    rig.te.cleanup();
  }
});
