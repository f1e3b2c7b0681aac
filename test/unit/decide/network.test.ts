/**
 * The pure network decision (src/decide/network*.ts): network_rules as Codex compiles them, the config
 * lists with Codex's wildcards (deny wins, `*.x` subdomains only, `**.x` apex too, bare `*` refused),
 * non-public destinations refused unless named exactly, grants, and the approval policy. Loopback only:
 * every address here is 127.0.0.0/8 or ::1 (private ranges are tested as literals of their class).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideNetwork, formatNetworkExplanation, networkSetting, NO_NETWORK_LISTS, type NetworkDecideInput } from '../../../src/decide/network.js';
import { parseDomainPattern, patternMatches } from '../../../src/decide/network-pattern.js';
import { addressClass, nonPublicDestination } from '../../../src/decide/network-address.js';
import { parsePolicy } from '../../../src/rules/index.js';
import { workspaceWrite } from '../../../src/sandbox/policy.js';
import type { NetworkLists } from '../../../src/decide/network.js';

const rulesOf = (text: string) => parsePolicy([{ path: '/r/default.rules', text }]).networkRuleList();
const lists = (allowed: string[], denied: string[] = []): NetworkLists => ({
  allowed: allowed.map(parseDomainPattern),
  denied: denied.map(parseDomainPattern),
});
const base: NetworkDecideInput = {
  host: 'registry.test',
  port: 443,
  protocol: 'https',
  addresses: [],
  rules: [],
  lists: NO_NETWORK_LISTS,
  approvalPolicy: 'on-request',
};

test('a network_rule allows or forbids its host, with the rule file:line; last writer wins as in Codex', () => {
  const rules = rulesOf(
    [
      'network_rule(host="registry.test", protocol="https", decision="allow")',
      'network_rule(host="evil.test", protocol="http", decision="deny", justification="exfiltration")',
      'network_rule(host="flip.test", protocol="https", decision="deny")',
      'network_rule(host="flip.test", protocol="https", decision="allow")',
    ].join('\n'),
  );
  const allow = decideNetwork({ ...base, rules });
  assert.equal(allow.decision, 'allow');
  assert.equal(allow.source, 'rule');
  assert.equal(allow.rule, '/r/default.rules:1');
  assert.equal(allow.namesHost, true);
  // a host's rule covers every protocol and port (Codex compiles rules into host lists)
  assert.equal(decideNetwork({ ...base, rules, protocol: 'socks5_tcp', port: 22 }).decision, 'allow');
  const deny = decideNetwork({ ...base, rules, host: 'evil.test' });
  assert.deepEqual([deny.decision, deny.source, deny.rule], ['deny', 'rule', '/r/default.rules:2']);
  assert.match(deny.reason, /network_rule forbids evil\.test \(\/r\/default\.rules:2\): exfiltration/);
  assert.equal(decideNetwork({ ...base, rules, host: 'flip.test' }).decision, 'allow');
  // a rule names a host exactly: a subdomain is another host
  assert.equal(decideNetwork({ ...base, rules, host: 'a.registry.test' }).decision, 'ask');
});

test('config lists: exact, *.x subdomains only, **.x apex and subdomains; deny wins over any allow', () => {
  const l = lists(['exact.test', '*.sub.test', '**.both.test', '**.mixed.test'], ['bad.mixed.test']);
  const d = (host: string) => decideNetwork({ ...base, host, lists: l });
  assert.equal(d('exact.test').decision, 'allow');
  assert.equal(d('a.exact.test').decision, 'ask');
  assert.equal(d('sub.test').decision, 'ask');
  assert.equal(d('a.sub.test').decision, 'allow');
  assert.equal(d('a.b.sub.test').decision, 'allow');
  assert.equal(d('both.test').decision, 'allow');
  assert.equal(d('x.both.test').decision, 'allow');
  assert.equal(d('notboth.test').decision, 'ask');
  assert.equal(d('ok.mixed.test').decision, 'allow');
  const bad = d('bad.mixed.test');
  assert.deepEqual([bad.decision, bad.source, bad.pattern], ['deny', 'config', 'bad.mixed.test']);
  // a denied pattern beats an allow rule too
  const rules = rulesOf('network_rule(host="bad.mixed.test", protocol="https", decision="allow")');
  assert.equal(decideNetwork({ ...base, host: 'bad.mixed.test', lists: l, rules }).decision, 'deny');
  // and a grant
  assert.equal(decideNetwork({ ...base, host: 'bad.mixed.test', lists: l, granted: 'session' }).decision, 'deny');
});

test('patterns: bare * and ** refused, wildcards only leading, no port, canonical case', () => {
  for (const bad of ['*', '**', ' * ', '*.', 'a.*.test', 'reg*.test', '*.com', '**.test', 'host.test:443', '*.127.0.0.1', 'http://x.test', ''])
    assert.throws(() => parseDomainPattern(bad), Error, bad);
  assert.throws(() => parseDomainPattern('*'), /would match every host/);
  const p = parseDomainPattern('**.Example.TEST.');
  assert.deepEqual(p, { text: '**.Example.TEST.', kind: 'apex-and-subdomains', domain: 'example.test' });
  assert.ok(patternMatches(p, 'example.test') && patternMatches(p, 'a.example.test') && !patternMatches(p, 'xexample.test'));
  assert.equal(parseDomainPattern('[::1]').domain, '::1');
});

test('loopback, private and link-local destinations: refused, never asked, unless a rule or entry names the host exactly', () => {
  assert.equal(addressClass('127.0.0.2'), 'loopback');
  assert.equal(addressClass('::1'), 'loopback');
  assert.equal(addressClass('::ffff:127.0.0.1'), 'loopback');
  assert.equal(addressClass('10.1.2.3'), 'private');
  assert.equal(addressClass('169.254.169.254'), 'link-local');
  assert.equal(addressClass('fe80::1%eth0'), 'link-local');
  assert.equal(addressClass('0.0.0.0'), 'unspecified');
  assert.equal(addressClass('::127.0.0.1'), 'reserved');
  assert.equal(addressClass('fec0::1'), 'private');
  assert.equal(addressClass('registry.test'), undefined);
  assert.deepEqual(nonPublicDestination('localhost', []), { address: 'localhost', class: 'loopback' });
  // a name that resolves to loopback, allowed only by a wildcard: refused, and a grant does not open it
  const l = lists(['**.registry.test']);
  const viaWildcard = decideNetwork({ ...base, lists: l, addresses: ['127.0.0.2'], granted: 'session' });
  assert.deepEqual([viaWildcard.decision, viaWildcard.source], ['deny', 'policy']);
  assert.match(viaWildcard.reason, /registry\.test resolves to 127\.0\.0\.2, a loopback address; only a network_rule or an allowed_domains entry naming 'registry\.test' exactly/);
  // the same name asked about with no rule: refused at once, not asked
  assert.equal(decideNetwork({ ...base, addresses: ['127.0.0.2'] }).decision, 'deny');
  for (const host of ['127.0.0.1', '::1', 'localhost', 'a.localhost', '10.0.0.1', '169.254.169.254'])
    assert.equal(decideNetwork({ ...base, host }).decision, 'deny', host);
  // named exactly by an entry or a rule: allowed, and the verdict lets the proxy reach the loopback address
  const exact = decideNetwork({ ...base, lists: lists(['registry.test']), addresses: ['127.0.0.2'] });
  assert.deepEqual([exact.decision, exact.namesHost], ['allow', true]);
  const byRule = decideNetwork({ ...base, rules: rulesOf('network_rule(host="127.0.0.1", protocol="http", decision="allow")'), host: '127.0.0.1' });
  assert.deepEqual([byRule.decision, byRule.namesHost], ['allow', true]);
  // an allow by wildcard for a public-looking name asked before resolving: allowed, but not for local addresses
  const wild = decideNetwork({ ...base, lists: l });
  assert.deepEqual([wild.decision, wild.namesHost], ['allow', false]);
});

test('grants: this run or this session allow; a prompt rule asks unless granted', () => {
  assert.equal(decideNetwork(base).decision, 'ask');
  assert.deepEqual(
    [decideNetwork({ ...base, granted: 'run' }).decision, decideNetwork({ ...base, granted: 'run' }).source],
    ['allow', 'granted-run'],
  );
  assert.equal(decideNetwork({ ...base, granted: 'session' }).source, 'granted-session');
  const rules = rulesOf('network_rule(host="registry.test", protocol="https", decision="prompt")');
  const asked = decideNetwork({ ...base, rules, lists: lists(['registry.test']) });
  assert.deepEqual([asked.decision, asked.source, asked.rule], ['ask', 'rule', '/r/default.rules:1']);
  assert.equal(decideNetwork({ ...base, rules, granted: 'run' }).decision, 'allow');
});

test('the approval policy: never and reject deny at once; untrusted, on-request and on-failure ask', () => {
  for (const p of ['untrusted', 'on-request', 'on-failure'] as const) assert.equal(decideNetwork({ ...base, approvalPolicy: p }).decision, 'ask', p);
  const never = decideNetwork({ ...base, approvalPolicy: 'never' });
  assert.deepEqual([never.decision, never.source], ['deny', 'policy']);
  assert.match(never.reason, /no network_rule or allowed_domains entry allows registry\.test, and approval_policy "never" asks nobody/);
  const reject = { reject: { sandbox_approval: true, rules: false, mcp_elicitations: false } };
  assert.equal(decideNetwork({ ...base, approvalPolicy: reject }).decision, 'deny');
  const rules = rulesOf('network_rule(host="registry.test", protocol="https", decision="prompt")');
  const rejectRules = { reject: { sandbox_approval: false, rules: true, mcp_elicitations: false } };
  assert.equal(decideNetwork({ ...base, rules, approvalPolicy: rejectRules }).decision, 'deny');
  assert.equal(decideNetwork({ ...base, approvalPolicy: rejectRules }).decision, 'ask');
  // an allowed host is allowed whatever the approval policy
  assert.equal(decideNetwork({ ...base, approvalPolicy: 'never', lists: lists(['registry.test']) }).decision, 'allow');
});

test('explain text: the setting, each rule with file:line, both lists', () => {
  const rules = rulesOf('network_rule(host="registry.test", protocol="https", decision="allow")');
  const text = formatNetworkExplanation('rules', rules, lists(['**.pypi.test'], ['*.evil.test'])).join('\n');
  assert.match(text, /^network: rules/);
  assert.match(text, /\/r\/default\.rules:1 {2}network_rule\(host="registry\.test", protocol="https", decision="allow"\)/);
  assert.match(text, /allowed_domains: \*\*\.pypi\.test/);
  assert.match(text, /denied_domains: \*\.evil\.test/);
  assert.equal(networkSetting(workspaceWrite()), 'off');
  assert.equal(networkSetting({ type: 'danger-full-access' }), 'on');
});
