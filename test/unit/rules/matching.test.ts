// Matching beyond the vectors: hardened mode, relative spellings, in-memory amendments, shlex, networks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { isPolicyMatch, type PrefixRuleMatch } from '../../../src/rules/policy.js';
import { shlexJoin, shlexQuote, shlexSplit } from '../../../src/rules/shlex.js';
import { normalizeHost } from '../../../src/rules/network.js';

const load = (text: string) => parsePolicy([{ path: 'm.rules', text }]);
const RULES = `prefix_rule(pattern=["rm"], decision="forbidden", justification="no deleting")
prefix_rule(pattern=["git", "push"], decision="prompt")
prefix_rule(pattern=["git"], decision="allow")
host_executable(name="git", paths=["/usr/bin/git"])
`;

test('hardened: basename prompt/forbidden rules catch every path spelling; basename allow does not', () => {
  const p = load(RULES);
  const H = { resolveHostExecutables: true, hardened: true };
  for (const rm of ['/bin/rm', '/opt/x/rm', './rm', '../bin/rm', 'bin/rm', '/usr/bin/../bin/rm', '~/rm']) {
    const ev = p.check([rm, '-rf', '/'], H);
    assert.equal(ev.decision, 'forbidden', rm);
    assert.equal((ev.matchedRules[0] as PrefixRuleMatch).justification, 'no deleting', rm);
  }
  // Codex-exact mode: relative spellings and unlisted paths fall through
  assert.equal(p.check(['./rm', '-rf'], { resolveHostExecutables: true, hardened: false }).decision, undefined);
  assert.equal(p.check(['/opt/x/rm'], { resolveHostExecutables: false, hardened: false }).decision, undefined);
  // a host_executable allowlist stops basename allow rules, but not the prompt in hardened mode
  assert.equal(p.check(['/opt/evil/git', 'status'], H).decision, undefined);
  assert.equal(p.check(['/opt/evil/git', 'push'], H).decision, 'prompt');
  assert.equal(p.check(['/usr/bin/git', 'status'], H).decision, 'allow');
  assert.equal(p.check(['./git', 'status'], H).decision, undefined);
  // exact matches plus basename forbidden rules: an exact allow cannot hide a forbidden basename rule
  const q = load('prefix_rule(pattern=["/bin/rm"])\nprefix_rule(pattern=["rm"], decision="forbidden")');
  assert.equal(q.check(['/bin/rm', 'x'], { resolveHostExecutables: true, hardened: false }).decision, 'allow');
  assert.equal(q.check(['/bin/rm', 'x'], H).decision, 'forbidden');
});

test('relative and ~/ spellings resolve only when a cwd/home is given (Codex 0.169.0 CLI)', () => {
  const p = load('prefix_rule(pattern=["git"])\nprefix_rule(pattern=["bin"], decision="prompt")');
  const ctx = { resolveHostExecutables: true, hardened: false, cwd: '/work/x', home: '/home/u' };
  const resolved = (cmd: string) => (p.check([cmd], ctx).matchedRules[0] as PrefixRuleMatch | undefined)?.resolvedProgram;
  assert.equal(resolved('./git'), '/work/x/git');
  assert.equal(resolved('../git'), '/work/git');
  assert.equal(resolved('git/'), '/work/x/git');
  assert.equal(resolved('~/git'), '/home/u/git');
  assert.equal(resolved('//usr/bin//git'), '/usr/bin/git');
  assert.equal(resolved('/usr/bin/.'), '/usr/bin');
  assert.equal(resolved('/'), undefined);
});

test('matchedRules in file/call order; checkMultiple gives each unmatched command its own fallback', () => {
  const p = parsePolicy([
    { path: 'a.rules', text: 'prefix_rule(pattern=["git"], decision="prompt")' },
    { path: 'b.rules', text: '\nprefix_rule(pattern=["git", "commit"], decision="forbidden")' },
  ]);
  const ev = p.check(['git', 'commit'], { resolveHostExecutables: true, hardened: false });
  assert.deepEqual(ev.matchedRules.map((m) => (m as PrefixRuleMatch).source), [
    { file: 'a.rules', line: 1, col: 1 },
    { file: 'b.rules', line: 2, col: 1 },
  ]);
  assert.deepEqual(p.files, ['a.rules', 'b.rules']);
  const multi = p.checkMultiple([['apple'], ['rm', '-rf', './'], ['git', 'status']], { resolveHostExecutables: true, hardened: false }, (c) =>
    c[0] === 'rm' ? 'forbidden' : 'allow',
  );
  assert.deepEqual(multi.matchedRules.map((m) => [m.type, m.decision]), [
    ['heuristicsRuleMatch', 'allow'],
    ['heuristicsRuleMatch', 'forbidden'],
    ['prefixRuleMatch', 'prompt'],
  ]);
  assert.equal(multi.decision, 'forbidden');
  assert.equal(isPolicyMatch(multi), true);
  assert.equal(isPolicyMatch(p.check(['ls'], { resolveHostExecutables: true, hardened: false }, () => 'allow')), false);
});

test('withPrefixRule returns a new policy and leaves the original untouched', () => {
  const p = load(RULES);
  const q = p.withPrefixRule(['echo', 'hello'], 'allow');
  const O = { resolveHostExecutables: true, hardened: false };
  assert.equal(q.check(['echo', 'hello', 'world'], O).decision, 'allow');
  assert.equal(p.check(['echo', 'hello', 'world'], O).decision, undefined);
  assert.equal(q.ruleCount, p.ruleCount + 1);
  assert.equal(q.check(['rm'], O).decision, 'forbidden');
});

test('shlex: split and quote as the Rust shlex crate', () => {
  const split: [string, string[] | undefined][] = [
    ['foo$baz', ['foo$baz']],
    ['foo baz', ['foo', 'baz']],
    ['foo"bar"baz', ['foobarbaz']],
    ['   foo \nbar', ['foo', 'bar']],
    ['foo\\\nbar', ['foobar']],
    ['"foo\\\nbar"', ['foobar']],
    ["'baz\\$b'", ['baz\\$b']],
    ["'baz\\''", undefined],
    ['\\', undefined],
    ['"\\', undefined],
    ['"', undefined],
    ["'", undefined],
    ['foo #bar\nbaz', ['foo', 'baz']],
    ['foo#bar', ['foo#bar']],
    ['foo"#bar', undefined],
    ['"a\\qb"', ['a\\qb']],
    ['a\rb', ['a\rb']],
  ];
  for (const [input, want] of split) assert.deepEqual(shlexSplit(input), want, JSON.stringify(input));
  assert.equal(shlexQuote(''), "''");
  assert.equal(shlexQuote('foobar'), 'foobar');
  assert.equal(shlexQuote('foo bar'), "'foo bar'");
  assert.equal(shlexQuote('\'"'), `"'\\""`);
  assert.equal(shlexQuote("it's $HOME"), `"it's "'$HOME'`);
  assert.equal(shlexQuote('^x'), "'^x'");
  assert.equal(shlexQuote('é'), "'é'");
  assert.equal(shlexJoin(['git', 'a b', '']), "git 'a b' ''");
  for (const words of [['a', "b'c", 'd"e', '$x', '\\', 'é f', '!', '^', 'x^y']]) assert.deepEqual(shlexSplit(shlexJoin(words)), words);
});

test('network hosts: canonical form and rejections', () => {
  assert.equal(normalizeHost('  Example.COM.:443 '), 'example.com');
  assert.equal(normalizeHost('[2001:0DB8:0:0::1]:443'), '2001:db8::1');
  assert.equal(normalizeHost('[fe80::1%25ETH0]'), 'fe80::1%eth0');
  assert.equal(normalizeHost('127.0.0.1:80'), '127.0.0.1');
  for (const bad of [
    '',
    '*',
    '*.example.com',
    'https://x',
    'a/b',
    'a b',
    'example.com:abc',
    'garbage::host',
    '[example.com]',
    '[::1]:65536',
    'example.com:',
    'user@example.com',
    '[::1%]',
  ]) {
    assert.throws(() => normalizeHost(bad), /network_rule host/, bad);
  }
  const p = load('network_rule("a.test", "https_connect", "allow", "why")\nnetwork_rule(host="b.test", protocol="socks5_udp", decision="forbidden")');
  assert.deepEqual(p.networkDomains(), { allowed: ['a.test'], denied: ['b.test'] });
});
