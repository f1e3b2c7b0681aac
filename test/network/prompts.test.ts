/**
 * A new host asked through the proxy, end to end (issue 33, "a prompt approved for this command only, for
 * the session, and saved as a rule; headless prompt denied at once"): a real daemon with network "rules"
 * and the test resolver, real gate-sh runs (bwrap, the bridge, the proxy) running curl, and a real
 * `gate approve --json` approver process. The decider's own cases (concurrent asks, a denial holding for
 * the run, the audit) are test/daemon/network-decider.test.ts's; here the prompt reaches a person from a
 * sandboxed program's connection and the answer reaches that program. Servers on 127.0.0.x only.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { startDaemon, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { approver } from '../daemon/network-rig.js';
import { defaultRulesFile } from '../../src/rules/index.js';
import { makeWorld, RULES, type World } from './servers.js';

// a long approval timeout: a refusal that comes at once cannot be a timeout
const CONFIG = 'approval_timeout_ms = 600000\n\n[sandbox_workspace_write]\nnetwork_access = "rules"\n';
const RULES_TEXT = `${RULES.join('\n')}\n`;

let w: World;
let d: DaemonProc;
let worldDir: string;

before(async () => {
  worldDir = mkdtempSync(join(tmpdir(), 'gnetp-'));
  w = await makeWorld(worldDir);
  d = await startDaemon({ config: CONFIG, rules: RULES_TEXT, workspace: 'ws', args: ['--test-resolver', w.hostsFile] });
});

after(async () => {
  await d?.close();
  await w?.close();
  rmSync(worldDir, { recursive: true, force: true });
});

const sh = (script: string) => run(GATE_SH, ['-c', script], { env: d.env, cwd: d.ws, timeoutMs: 120_000 });
const get = (host: string) => `curl -sS -f http://${host}:${w.webPort}/hello`;

test('headless: a new host is refused at once with the reason, in the response and on stderr; a ruled host still works', { timeout: 60_000 }, async () => {
  const r = await sh(`${get('web.test')}; ${get('headless.test')}; echo "curl: $?"`);
  assert.match(r.stdout, /^hello from web\.test/, 'the allowed host works');
  assert.match(r.stdout, /curl: 22\n$/);
  const why = "approval needed but no approver is attached (run 'gate approve'): no network_rule or allowed_domains entry allows headless.test";
  assert.ok(r.stderr.includes(`gate-sh: network: denied headless.test:${w.webPort}: ${why}\n`), r.stderr);
});

test('approved for this command only: the run that asked connects (again without asking); the next run is asked again', { timeout: 90_000 }, async () => {
  const a = await approver(d.env, () => 'approved');
  try {
    const r = await sh(`${get('once.test')} && ${get('once.test')}`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `hello from web.test via once.test:${w.webPort}\n`.repeat(2));
    assert.equal(a.prompts.length, 1, 'the second connection of the run is not asked');
    const p = a.prompts[0];
    assert.equal(p.origin, 'network');
    assert.deepEqual(p.network_approval_context, { host: 'once.test', protocol: 'http' });
    assert.equal(p.network_port, w.webPort);
    assert.match(p.display, /curl -sS -f http:\/\/once\.test/, 'the command that asked');
    assert.equal(p.cwd, d.ws);
    // the next run: asked again, and this time refused
    a.answer = () => 'denied';
    const r2 = await sh(`${get('once.test')}; echo "curl: $?"`);
    assert.equal(a.prompts.length, 2);
    assert.match(r2.stdout, /^curl: 22\n$/);
    assert.ok(r2.stderr.includes(`gate-sh: network: denied once.test:${w.webPort}: User denied the connection\n`), r2.stderr);
  } finally {
    await a.close();
  }
});

test('approved for the session: the next run connects without asking', { timeout: 90_000 }, async () => {
  const a = await approver(d.env, () => 'approved_for_session');
  try {
    const r = await sh(get('session.test'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(a.prompts.length, 1);
    a.answer = () => 'denied'; // were it asked again, it would be refused
    const r2 = await sh(get('session.test'));
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(r2.stdout, `hello from web.test via session.test:${w.webPort}\n`);
    assert.equal(a.prompts.length, 1, 'not asked again');
  } finally {
    await a.close();
  }
});

test('saved as a network_rule: the rules file gains the line whole, and a new daemon with no approver allows the host', { timeout: 120_000 }, async () => {
  const rulesDir = join(d.env.GATE_HOME, 'rules');
  const a = await approver(d.env, () => 'network_policy_amendment');
  try {
    const r = await sh(get('saved.test'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(a.prompts.length, 1);
    assert.equal(a.prompts[0].amendment_rule, 'network_rule(host="saved.test", protocol="http", decision="allow")');
    // appended under the default rules file's lock as one line (Codex's file: $CODEX_HOME/rules/default.rules)
    assert.equal(readFileSync(defaultRulesFile(d.env), 'utf8'), 'network_rule(host="saved.test", protocol="http", decision="allow")\n');
    assert.deepEqual(readdirSync(dirname(defaultRulesFile(d.env))), ['default.rules'], 'nothing else left beside it');
    assert.equal(readFileSync(join(rulesDir, 'default.rules'), 'utf8'), RULES_TEXT, "the daemon's own rules file is untouched");
  } finally {
    await a.close();
  }
  // a new daemon on the same home, nobody to ask: the saved rule decides
  await d.stop();
  d = await startDaemon({ te: d.te, workspace: 'ws', args: ['--test-resolver', w.hostsFile] });
  const r = await sh(`${get('saved.test')} && ${get('headless.test')}; echo "curl: $?"`);
  assert.equal(r.stdout, `hello from web.test via saved.test:${w.webPort}\ncurl: 22\n`);
  assert.match(r.stderr, /denied headless\.test:\d+: approval needed but no approver is attached/, 'still headless: the rule, not a person, allowed saved.test');
});
