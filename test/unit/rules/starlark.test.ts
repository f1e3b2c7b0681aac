// The Starlark subset real rule files use, and a located error for everything beyond it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/rules/parser.js';
import { PolicyError } from '../../../src/rules/error.js';
import type { PrefixRuleMatch } from '../../../src/rules/policy.js';

const CODEX = { resolveHostExecutables: false, hardened: false };
const load = (text: string) => parsePolicy([{ path: 'f.rules', text }]);
const prefixes = (text: string, cmd: string[]) =>
  (load(text).check(cmd, CODEX).matchedRules as PrefixRuleMatch[]).map((m) => m.matchedPrefix);

function rejects(text: string, where: string, contains: string) {
  assert.throws(
    () => load(text),
    (e: unknown) => {
      assert.ok(e instanceof PolicyError, String(e));
      assert.ok(e.message.startsWith(`f.rules:${where}: `), `${JSON.stringify(text.slice(0, 80))} → ${e.message}`);
      assert.ok(e.message.includes(contains), `${JSON.stringify(text.slice(0, 80))} → ${e.message}`);
      return true;
    },
  );
}

test('string forms: single, double, triple-quoted, raw, escapes', () => {
  const cases: [string, string][] = [
    [`'a b'`, 'a b'],
    [`"a\\"b"`, 'a"b'],
    [`'it\\'s'`, "it's"],
    [`"""multi\nline"""`, 'multi\nline'],
    [`'''x"y'''`, 'x"y'],
    [`r"C:\\dir\\n"`, 'C:\\dir\\n'],
    [`R'\\d+'`, '\\d+'],
    [`"tab\\tnl\\nq\\\\"`, 'tab\tnl\nq\\'],
    [`"\\x41\\u00e9\\U0001F600\\101"`, 'AéπA'.replace('π', '\u{1F600}')],
    [`"keep \\d"`, 'keep \\d'],
    [`"joined \\\nline"`, 'joined line'],
    // starlark-rust raw strings: a backslash before a quote is dropped, every other one kept
    [`r"say \\"hi\\""`, 'say "hi"'],
    [`r'a\\"b\\\\'`, 'a"b\\\\'],
  ];
  for (const [lit, value] of cases) {
    assert.deepEqual(prefixes(`prefix_rule(pattern=["p", ${lit}])`, ['p', value]), [['p', value]], lit);
  }
});

test('keywords, positionals, trailing commas, multi-line calls, comments', () => {
  const text = `# a comment
prefix_rule(
    pattern = [
        "git",   # inline comment
        ["status", "log"],
    ],
    decision = "prompt",
    justification = "read only",
)
prefix_rule(["npm", "test"], "forbidden",)
prefix_rule(["ls"]); prefix_rule(pattern=["ls", "-l"], decision="prompt")
`;
  const p = load(text);
  assert.equal(p.check(['git', 'log'], CODEX).decision, 'prompt');
  assert.equal(p.check(['npm', 'test', '--x'], CODEX).decision, 'forbidden');
  assert.equal(p.check(['ls', '-l'], CODEX).decision, 'prompt');
  assert.equal(p.ruleCount, 4);
  const m = p.check(['git', 'status'], CODEX).matchedRules[0] as PrefixRuleMatch;
  assert.deepEqual(m.source, { file: 'f.rules', line: 2, col: 1 });
  assert.equal(m.justification, 'read only');
});

test('top-level assignments reused later, + on lists and strings, tuples as values', () => {
  const text = `GIT = ["git"]
READ = ["status", "log"]
WHY = "read" + " only"
T = ("a",) + ("b",)
prefix_rule(pattern = GIT + [READ], justification = WHY)
prefix_rule(pattern = GIT + ["push"] + ["-f"], decision = "forbidden")
`;
  const p = load(text);
  assert.equal((p.check(['git', 'log'], CODEX).matchedRules[0] as PrefixRuleMatch).justification, 'read only');
  assert.equal(p.check(['git', 'push', '-f'], CODEX).decision, 'forbidden');
  // a pattern must be a list, as in Codex
  rejects('prefix_rule(pattern=("a", "b"))', '1:1', "Type of parameter `pattern` doesn't match, expected `list`, actual `tuple");
});

test('beyond the subset: a located error naming the construct', () => {
  rejects('x = 1\nif x:\n    prefix_rule(pattern=["a"])\n', '2:1', 'if statement');
  rejects('def f():\n    pass\n', '1:1', 'function definition');
  rejects('P = ["a"]\nprefix_rule(pattern=[x for x in P])\n', '2:24', 'comprehension');
  rejects('prefix_rule(pattern="a b".split())', '1:26', 'attribute access');
  rejects('P = ["a"]\nprefix_rule(pattern=P[0:1])', '2:22', 'indexing or slicing');
  rejects('prefix_rule(pattern=["a"], **{})', '1:28', '**kwargs');
  rejects('prefix_rule(pattern=["%s" % "a"])', '1:27', 'operator %');
  rejects('load("x.star", "y")', '1:1', 'load()');
  rejects('prefix_rule(pattern=[f"a{1}"])', '1:22', 'f-string');
  rejects('prefix_rule(pattern=[b"a"])', '1:22', 'bytes literal');
  rejects('prefix_rule(pattern=["a"] if True else ["b"])', '1:27', 'conditional expression');
  rejects('x += ["a"]', '1:3', 'augmented assignment');
  rejects('  prefix_rule(pattern=["a"])', '1:3', 'indentation');
  rejects('prefix_rule(pattern=["a" "b"])', '1:26', 'unexpected string literal "b"');
  rejects('x = {"a": 1}', '1:5', 'dict literal');
  rejects('x = 1.5', '1:5', 'number literal 1.5');
});

test('bad input: unterminated strings, unknown builtins, wrong types, arity', () => {
  rejects('prefix_rule(pattern=["a])', '1:22', 'unfinished string literal');
  rejects('prefix_rule(pattern=["""a])\n\n', '1:22', 'unfinished string literal');
  rejects('prefix_rule(', '1:12', "Parse error: unclosed '(' at end of file");
  rejects('x = [\n  "a",\n', '1:5', "unclosed '['");
  rejects('\n\nprefix_rules(pattern=["a"])', '3:1', 'Variable `prefix_rules` not found');
  rejects('prefix_rule(pattern=["a"], decision=1)', '1:1', "Type of parameter `decision` doesn't match, expected `str`, actual `int (repr: 1)`");
  rejects('prefix_rule(pattern=["a"], justification=None)', '1:1', 'actual `NoneType (repr: None)`');
  rejects('prefix_rule(decision="allow")', '1:1', 'Missing parameter `pattern` for call to `prefix_rule`');
  rejects('prefix_rule(pattern=["a"], bogus=1)', '1:1', 'Found `bogus` extra named parameter(s) for call to prefix_rule');
  rejects('prefix_rule(["a"], pattern=["b"])', '1:1', 'Argument `pattern` occurs more than once');
  rejects('prefix_rule(pattern=["a"], pattern=["b"])', '1:28', 'repeated named argument');
  rejects('prefix_rule(["a"], "allow", [], [], "j", False, 7)', '1:1', 'Found 1 extra positional parameter(s)');
  rejects('x = ["a"] + "b"', '1:5', 'Operation `+` not supported for types `list` and `string`');
  rejects('x = "a"\nx()', '2:1', 'Operation `()` not supported on type `string`');
  rejects('network_rule("a.com", "https")', '1:1', 'Missing parameter `decision`');
  rejects('host_executable("git", ("/usr/bin/git",))', '1:1', "expected `list`, actual `tuple");
  rejects('prefix_rule(pattern=["a"], decision="deny")', '1:1', 'starlark error: invalid decision: deny');
});

// codex execpolicy check 0.169.0's errors for these (rules/differential found the first with seed 20261128)
test('names as starlark-rust resolves them: one never assigned is found before the module runs; one assigned later is read before assignment', () => {
  rejects('prefix_rule(pattern=["a"], decision="allow", decision2="x")\nfoo()\nbar()\n', '2:1', 'Variable `foo` not found');
  rejects('y = 1 + "a"\nfoo()\n', '2:1', 'Variable `foo` not found');
  rejects('x = [bar]\ny = 1 + "a"\n', '1:6', 'Variable `bar` not found');
  rejects('prefix_rule(pattern=x, decision="allow")\nx = ["ls"]\n', '1:21', 'Local variable `x` referenced before assignment');
  rejects('x = x\n', '1:5', 'Local variable `x` referenced before assignment');
  // a syntax error anywhere still wins
  rejects('foo()\nprefix_rule(', '2:12', "unclosed '('");
  assert.deepEqual(prefixes('x = ["ls"]\nprefix_rule(pattern=x + ["-l"], decision="allow")\n', ['ls', '-l']), [['ls', '-l']]);
});

test('the file name and position of the failing call, not the first one', () => {
  assert.throws(
    () => parsePolicy([
      { path: 'one.rules', text: 'prefix_rule(pattern=["a"])\n' },
      { path: 'two.rules', text: '\n   \nprefix_rule(pattern=["b"])\n  # note\nprefix_rule(pattern=["c"], match=["d"])\n' },
    ]),
    (e: unknown) => e instanceof PolicyError && e.file === 'two.rules' && e.line === 5 && e.col === 1 && /expected every example to match/.test(e.message),
  );
});

test('canonical_matching (Codex 0.169.0 parameter) is accepted as a bool', () => {
  assert.equal(load('prefix_rule(pattern=["git"], canonical_matching=True)').check(['git'], CODEX).decision, 'allow');
  rejects('prefix_rule(pattern=["git"], canonical_matching=1)', '1:1', 'expected `bool`');
});

test('bounded: deep nesting, doubling values and long + chains fail cleanly or work', () => {
  rejects('x = ' + '['.repeat(100_000) + ']'.repeat(100_000), '1:205', 'nesting too deep (more than 200 levels)');
  rejects('x = ["a"]\n' + 'x = x + x\n'.repeat(40), '22:5', 'value too large');
  rejects('x = "a"\n' + 'x = x + x\n'.repeat(40), '22:5', 'value too large');
  // a long `+` chain is folded in a loop and in place: no stack overflow, no quadratic copying
  const long = `X = ${Array.from({ length: 20_000 }, () => '["a"]').join(' + ')}\nprefix_rule(pattern = ["p", X])`;
  assert.equal(load(long).check(['p', 'a'], CODEX).decision, 'allow');
  const chain = `T = ${Array.from({ length: 20_000 }, (_, k) => `"${k % 10}"`).join(' + ')}\nprefix_rule(pattern = ["p", T])`;
  assert.equal(load(chain).ruleCount, 1);
});
