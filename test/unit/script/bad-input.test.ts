/** Bad input is complex (or a clear reason), never a crash, never plain. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeScript } from '../../../src/script/analyze.js';
import { parseShellLcPlainCommands, parseShellLcSingleCommandPrefix } from '../../../src/script/codex-compat.js';

function mustBeComplex(script: string, reason: RegExp): void {
  const a = analyzeScript(script);
  assert.equal(a.kind, 'complex', JSON.stringify(script.slice(0, 80)));
  if (a.kind === 'complex') assert.match(a.reasons.join('; '), reason, JSON.stringify(script.slice(0, 80)));
}

test('syntax errors are complex with the parser message', () => {
  for (const s of [
    'ls &&',
    '&& ls',
    'ls ;; pwd',
    'ls | | wc',
    'if true; then',
    'echo "unclosed',
    "echo 'unclosed",
    'foo(',
    'ls )',
    'cat <<EOF\nno end',
    '$(',
    '{ ls',
    'case x in',
  ])
    mustBeComplex(s, /parse error: .*\d+:\d+/);
});

test('NUL bytes, lone surrogates, invalid UTF-8 and carriage returns are complex', () => {
  mustBeComplex('ls\0rm -rf /', /NUL/);
  mustBeComplex('echo \ud800 ok', /surrogate/);
  mustBeComplex('echo ok \udc00', /surrogate/);
  mustBeComplex(Buffer.from([0x6c, 0x73, 0x20, 0xff, 0xfe, 0x0a]).toString('utf8'), /UTF-8/);
  mustBeComplex('ls\r\npwd\r\n', /carriage return/);
  // a valid surrogate pair is fine
  const a = analyzeScript('echo \ud83d\ude00');
  assert.ok(a.kind === 'plain' && a.commands[0].argv[1] === '\u{1f600}');
});

test('a 10 MB script is complex at once (size cap), in milliseconds', () => {
  const big = 'echo hello world && true\n'.repeat(420_000);
  assert.ok(big.length > 10_000_000);
  const t = performance.now();
  mustBeComplex(big, /larger than \d+ bytes/);
  // not a timing assertion: a generous ceiling only catches "it parsed 10 MB"
  assert.ok(performance.now() - t < 5_000);

});

test('maxBytes is honoured', () => {
  assert.equal(analyzeScript('ls && pwd', { maxBytes: 5 }).kind, 'complex');
  assert.equal(analyzeScript('ls && pwd', { maxBytes: 9 }).kind, 'plain');
});

test('1,000 levels of nesting: complex, no crash', () => {
  mustBeComplex('('.repeat(1000) + 'ls' + ')'.repeat(1000), /.+/);
  mustBeComplex('{ '.repeat(1000) + 'ls; ' + '}; '.repeat(1000), /.+/);
  mustBeComplex('echo ' + '$('.repeat(1000) + 'ls' + ')'.repeat(1000), /.+/);
  mustBeComplex('if true; then '.repeat(1000) + 'ls; ' + 'fi; '.repeat(1000), /.+/);
  mustBeComplex('echo "' + '$(echo "'.repeat(1000) + 'x' + '")'.repeat(1000) + '"', /.+/);
  mustBeComplex('a | '.repeat(1000) + 'b >/dev/null', /.+/);
});

test('12,000 chained && and pipes: walked without recursion, every command still extracted', () => {
  for (const op of [' && ', ' | ']) {
    const s = `a${op}`.repeat(12_000) + 'a';
    const a = analyzeScript(s);
    assert.equal(a.kind, 'complex');
    if (a.kind === 'complex') assert.equal(a.literalCommands.length, 12_001, a.reasons.join('; '));
    assert.doesNotThrow(() => parseShellLcPlainCommands(['bash', '-c', s]));
    assert.doesNotThrow(() => parseShellLcSingleCommandPrefix(['bash', '-c', s]));
  }
});

test('not a string: complex, not a throw', () => {
  // callers in JS land can pass anything
  assert.equal(analyzeScript(undefined as unknown as string).kind, 'complex');
  assert.equal(analyzeScript(42 as unknown as string).kind, 'complex');
});
