/** Codex parity on the parse vectors: shell detection, plain commands, heredoc prefix. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vectors } from '../../helpers/vectors.js';
import { detectShell, nestedShell } from '../../../src/script/shell-detect.js';
import { parseShellLcPlainCommands, parseShellLcSingleCommandPrefix } from '../../../src/script/codex-compat.js';
import { analyzeScript } from '../../../src/script/analyze.js';

test('shell_detect_cases: exact names only; PowerShell is not a shell gate-sh parses', () => {
  for (const v of vectors.shell_detect_cases) {
    const want = v.type === 'powershell' ? null : v.type;
    assert.equal(detectShell(v.shell), want, v.shell);
  }
});

test('nestedShell takes exactly [shell, -c|-lc, script]', () => {
  assert.deepEqual(nestedShell(['bash', '-lc', 'ls']), { shell: 'bash', kind: 'bash', flag: '-lc', script: 'ls' });
  assert.deepEqual(nestedShell(['/bin/zsh', '-c', 'ls'])?.kind, 'zsh');
  for (const argv of [
    ['bash', '-l', '-c', 'ls'],
    ['bash', '-cl', 'ls'],
    ['bash', '-ic', 'ls'],
    ['bash', '-c', 'ls', 'x'],
    ['/tmp/bash', '-c', 'ls'],
    ['bash', '-c'],
  ])
    assert.equal(nestedShell(argv), null, JSON.stringify(argv));
});

test('parse_cases: parseShellLcPlainCommands equals Codex', () => {
  for (const v of vectors.parse_cases) {
    const argv = v.argv ?? ['bash', '-lc', v.script];
    const got = parseShellLcPlainCommands(argv);
    if (v.plain === null || (Array.isArray(v.plain) && v.plain.length === 0)) assert.ok(got === null || got.length === 0, v.script);
    else assert.deepEqual(got, v.plain, v.script);
  }
});

test('observed_parse_gaps: the raw-word port reproduces Codex (gaps included)', () => {
  for (const v of vectors.observed_parse_gaps) assert.deepEqual(parseShellLcPlainCommands(['bash', '-lc', v.script]), v.plain, v.script);
});

test('tree-sitter nodes outside the whitelist give up as in Codex', () => {
  for (const s of ['[ -f x ]', 'unset FOO', 'ls && [ -d y ]', 'export A=1', 'local x', 'let x=1', '[[ -f x ]]', 'time -p ls'])
    assert.equal(parseShellLcPlainCommands(['bash', '-lc', s]), null, s);
  assert.deepEqual(parseShellLcPlainCommands(['bash', '-lc', 'test -f x && echo [']), [['test', '-f', 'x'], ['echo', '[']]);
});

test('heredoc_prefix_cases: parseShellLcSingleCommandPrefix equals Codex', () => {
  for (const v of vectors.heredoc_prefix_cases) assert.deepEqual(parseShellLcSingleCommandPrefix(v.argv), v.prefix, v.argv[2]);
});

// gate-sh's own analysis differs from Codex only where Codex names the wrong program or words.
const IMPROVEMENTS: Record<string, { plain: string[][] | null; why: string }> = {
  'FOO=bar ls': { plain: [['ls']], why: 'VAR=x cmd runs cmd; the assignment is kept for the decision layer' },
};

test('parse_cases: analyzeScript agrees with Codex except documented improvements', () => {
  for (const v of vectors.parse_cases) {
    const a = analyzeScript(v.script);
    const want = IMPROVEMENTS[v.script]?.plain ?? v.plain;
    if (want === null) assert.equal(a.kind, 'complex', v.script);
    else {
      assert.equal(a.kind, 'plain', v.script);
      if (a.kind === 'plain') assert.deepEqual(a.commands.map((c) => c.argv), want, v.script);
    }
  }
  const a = analyzeScript('FOO=bar ls');
  assert.ok(a.kind === 'plain' && a.commands[0].assignments[0] === 'FOO=bar');
});

test('observed_parse_gaps: analyzeScript gives the words bash really runs, or complex', () => {
  const want: Record<string, string[][] | null> = {
    '\\rm -rf /': [['rm', '-rf', '/']], // quote removal: bash runs rm
    "r''m -rf /": [['rm', '-rf', '/']],
    "'rm' -rf /": [['rm', '-rf', '/']],
    'echo a\\ b': [['echo', 'a b']],
    'echo "a\\"b"': [['echo', 'a"b']],
    'ls *.py': null, // glob: bash's words depend on the files
    'echo {a,b}': null, // brace expansion
    'ls ~/x': null, // tilde expansion
    'ls\npwd': [['ls'], ['pwd']],
    'ls # comment': [['ls']], // a comment runs nothing
    'time ls': null, // the time keyword: complex (its literal command ls is still extracted)
    '! ls': null, // negation changes list semantics: complex
    'ls |& wc': null, // bash-parser cannot parse |&, so no second opinion: complex
    "echo $'x'": [['echo', 'x']], // ANSI-C quoting decoded (masked for bash-parser, which throws on it)
    '"ls" -l': [['ls', '-l']],
  };
  for (const v of vectors.observed_parse_gaps) {
    assert.ok(v.script in want, v.script);
    const a = analyzeScript(v.script);
    const w = want[v.script];
    if (w === null) assert.equal(a.kind, 'complex', v.script);
    else assert.deepEqual(a.kind === 'plain' ? a.commands.map((c) => c.argv) : a.reasons, w, v.script);
  }
});
