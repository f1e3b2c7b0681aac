/** Complex scripts: every literal command is extracted, wherever bash would run it from. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeScript } from '../../../src/script/analyze.js';

function names(script: string): string[] {
  const a = analyzeScript(script);
  assert.equal(a.kind, 'complex', script);
  return a.kind === 'complex' ? a.literalCommands.map((c) => c.argv.join(' ')) : [];
}

test('literal commands hidden in every construct are found', () => {
  const cases: [string, string][] = [
    ['echo ${x:-$(zz -rf /)}', 'zz -rf /'],
    ['echo ${x/$(zz)/y}', 'zz'],
    ['echo ${x:$(zz):1}', 'zz'],
    ['echo ${arr[$(zz)]}', 'zz'],
    ['echo $(( $(zz) + 1 ))', 'zz'],
    ['a[$(zz)]=1', 'zz'],
    ['x=$(zz)', 'zz'],
    ['FOO=`zz` yy', 'zz'],
    ['export X=$(zz)', 'zz'],
    ['declare -r y=$(zz)', 'zz'],
    ['local z=$(zz) 2>/dev/null', 'zz'],
    ['let x=$(zz)', 'zz'],
    ['(( x = $(zz) ))', 'zz'],
    ['[[ $(zz) == y ]]', 'zz'],
    ['[[ -n x && ( $(zz) ) ]]', 'zz'],
    ['case $(zz) in a) yy ;; esac', 'zz'],
    ['case x in $(zz)) yy ;; esac', 'zz'],
    ['case x in a) zz -x ;; esac', 'zz -x'],
    ['for i in $(zz); do :; done', 'zz'],
    ['for ((i=$(zz); i<1; i++)); do :; done', 'zz'],
    ['for i in a; do zz "$i"; done', 'zz'],
    ['while zz; do :; done', 'zz'],
    ['until yy; do zz; done', 'zz'],
    ['if yy; then :; elif zz; then :; else :; fi', 'zz'],
    ['if yy; then :; else zz q; fi', 'zz q'],
    ['f() { zz; }', 'zz'],
    ['function f { zz -a; }', 'zz -a'],
    ['{ zz; }', 'zz'],
    ['( zz )', 'zz'],
    ['! zz', 'zz'],
    ['time zz', 'zz'],
    ['coproc zz', 'zz'],
    ['select x in a; do zz; done', 'zz'],
    ['yy <(zz)', 'zz'],
    ['yy >(zz)', 'zz'],
    ['yy > $(zz)', 'zz'],
    ['yy <<EOF\n$(zz)\nEOF', 'zz'],
    ['yy <<< "$(zz)"', 'zz'],
    ['echo "a $(yy "b $(zz)")"', 'zz'],
    ['echo `yy \\`zz\\``', 'zz'],
    ["trap 'zz -f x' EXIT", 'zz -f x'],
    ["yy && trap 'zz' INT", 'zz'],
    ["bash -c 'zz a' && echo $(x)", 'zz a'],
    ["sudo sh -c 'zz b' > f", 'zz b'],
    ["find . -exec zz {} ';' > f", 'zz {}'],
    ["xargs zz < f", 'zz'],
    ["bash <<'EOF'\nzz c\nEOF", 'zz c'],
    ['sh <<< "zz d"', 'zz d'],
    ["bash <<'EOF'\nzz a\\\\b\nEOF", 'zz a\\b'], // quoted delimiter: the body is verbatim, bash then reads a\\b as a\b
    ['sh <<EOF\nzz \\$HOME \\\\y\nEOF', 'zz y'], // unquoted: the heredoc turns \\$ \\\\ into $ \\, then sh reads $HOME \\y
    ["env -i zz e > f", 'zz e'],
    ['yy $(bash -c "zz f")', 'zz f'],
    ['echo $x; zz -rf $dir', 'zz -rf'],
    ['echo "x"#$(zz -g)', 'zz -g'], // both parsers read `#$(..)` as a comment; bash does not
    ["echo ${a}#`zz -h`", 'zz -h'],
  ];
  for (const [script, want] of cases) assert.ok(names(script).includes(want), `${JSON.stringify(script)}: ${JSON.stringify(names(script))}`);
});

test('what is not a command is not extracted', () => {
  assert.deepEqual(names("echo 'zz -rf x' > f"), ['echo zz -rf x']);
  assert.deepEqual(names('cat <<EOF > f\nzz -rf /\nEOF'), ['cat']); // a heredoc body is data
  assert.deepEqual(names('$cmd -rf y; echo ok > f'), ['echo ok']); // a non-literal name is not a literal command
  const a = analyzeScript('$cmd -rf y');
  assert.ok(a.kind === 'complex' && a.reasons.some((r) => /^non-literal command name/.test(r)));
});

test('complex results carry Codex heredoc prefix when it applies', () => {
  const a = analyzeScript("python3 <<'PY'\nprint('hi')\nPY");
  assert.ok(a.kind === 'complex');
  if (a.kind === 'complex') assert.deepEqual(a.heredocPrefix, ['python3']);
  const b = analyzeScript("python3 <<'PY' > out\nprint('hi')\nPY");
  assert.ok(b.kind === 'complex' && b.heredocPrefix === undefined);
});

test('reasons say what and where', () => {
  const a = analyzeScript('echo $(pwd) > out && (ls)');
  assert.ok(a.kind === 'complex');
  if (a.kind === 'complex') {
    assert.ok(a.reasons.includes('command substitution at 1:6'), a.reasons.join('; '));
    assert.ok(a.reasons.includes('redirection at 1:13'), a.reasons.join('; '));
    assert.ok(a.reasons.includes('subshell ( ) at 1:22'), a.reasons.join('; '));
  }
});

test('plain keeps the list structure and redirects is false', () => {
  const a = analyzeScript('a && b || c; d | e\nf |\ng');
  assert.equal(a.kind, 'plain');
  if (a.kind !== 'plain') return;
  assert.deepEqual(a.commands.map((c) => c.argv[0]), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  assert.deepEqual(a.ops, ['&&', '||', ';', '|', '\n', '|']);
  assert.ok(a.commands.every((c) => !c.redirects));
});

test('assignments and resolution-changing builtins', () => {
  const a = analyzeScript('PATH=/tmp/evil LD_PRELOAD=x.so ls -l');
  assert.ok(a.kind === 'plain' && JSON.stringify(a.commands[0].assignments) === '["PATH=/tmp/evil","LD_PRELOAD=x.so"]');
  for (const s of [
    'FOO=$(id) ls',
    'FOO=~/x ls',
    'FOO=a:~/b ls',
    'arr=(1 2) ls',
    'x=1',
    'alias ls=rm',
    'hash -p /bin/rm ls',
    'enable -f x.so y',
    'shopt -s expand_aliases',
    'command alias ls=rm',
    'builtin hash -p /bin/rm ls',
  ])
    assert.equal(analyzeScript(s).kind, 'complex', s);
});
