/**
 * The structured opaque marker: every hidden execution carries an OpaqueKind next to its display text
 * (both or neither), and a complex script lists the kinds it hides, 'dynamic-name' included — the
 * policy decides on these, never on the texts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeScript, unwrapCommand, type OpaqueKind, type Subcommand } from '../../../src/script/analyze.js';
import { CORPUS } from './oracle-corpus.js';
import { randomScript, rng } from './fuzz-scripts.js';

const w = (s: string) => s.split(' ');

test('wrappers and programs that hide what they run: the kind of each', () => {
  const cases: [string[], OpaqueKind][] = [
    [['eval', 'rm -rf /'], 'eval'], [['source', 'x.sh'], 'source'], [['.', 'x.sh'], 'source'], [w('su -c x'), 'shell'],
    [w('ssh host rm'), 'remote'], [w('watch rm x'), 'command-string'], [['env', '-S', 'rm x'], 'command-string'],
    [w('sudo -s'), 'shell'], [w('sudo -i'), 'shell'], [w('sudo -e f'), 'edits-files'], [w('doas -s'), 'shell'],
    [w('bash script.sh'), 'script-file'], [w('sh -s'), 'stdin-script'], [['bash'], 'stdin-script'], [['bash', '-c'], 'command-string'],
    [['bash', '-c', 'echo $(rm x)'], 'command-string'], [['python3', '-c', 'x'], 'inline-code'], [w('node -e x'), 'inline-code'],
    [w('chroot / rm'), 'wrapper'], [w('expect f'), 'script-file'], [w('sudo eval x'), 'eval'], [w('timeout 5 ssh h'), 'remote'],
    [['find', '.', '-exec', 'ssh', 'h', ';'], 'remote'], [['xargs', 'sh', '-c', 'rm $1'], 'command-string'],
    [['bash', '-c', "ssh h 'ls'"], 'remote'],
  ];
  for (const [argv, kind] of cases) {
    const u = unwrapCommand(argv);
    assert.equal(u.opaqueKind, kind, argv.join(' '));
    assert.ok(u.opaque, argv.join(' '));
  }
  assert.deepEqual(unwrapCommand(w('env -i nice rm x')), { inner: [w('nice rm x'), w('rm x')] });
  let deep = 'rm x';
  for (let i = 0; i < 11; i++) deep = `bash -c '${deep.replace(/'/g, "'\\''")}'`;
  assert.equal(unwrapCommand(['bash', '-c', deep]).opaqueKind, 'command-string'); // the innermost: too deep, reported as complex
});

test('in scripts: subcommands carry the kind; trap strings and shells fed on stdin too', () => {
  const plain = analyzeScript("ssh host 'ls' && sudo -u bob env ls && bash -c 'ssh h ls' && bash -c 'eval x'");
  assert.ok(plain.kind === 'plain');
  if (plain.kind === 'plain')
    assert.deepEqual(
      plain.commands.map((c) => c.opaqueKind),
      ['remote', undefined, 'remote', 'command-string'],
    ); // eval makes that script complex
  const kinds = (s: string) => {
    const a = analyzeScript(s);
    assert.equal(a.kind, 'complex', s);
    return a.kind === 'complex' ? a.opaqueKinds : [];
  };
  // a literal trap string or eval text is read as the script it is; one known only at run time is not
  assert.deepEqual(kinds("trap 'echo $(date)' EXIT"), []);
  assert.deepEqual(kinds('trap "$x" EXIT'), ['command-string']);
  assert.deepEqual(kinds('bash <<EOF\n$x\nEOF'), ['stdin-script']);
  assert.deepEqual(kinds("eval 'rm x'; source f"), ['source']);
  assert.deepEqual(kinds('eval "$x"; source f'), ['eval', 'source']);
  assert.deepEqual(kinds('echo $(pwd) > f'), []);
});

test("a command whose name is only known at run time: 'dynamic-name', wherever it is, however many reasons precede it", () => {
  for (const s of ['x=rm; $x -rf y', '"$(which rm)" x', 'for f in a; do $f; done', 'echo "$($cmd y)"', '${x:-rm} -rf', '`echo rm` x', 'f() { "$@"; }',
    'echo "x"#$(z) && $y', Array.from({ length: 60 }, () => '(aa)').join('; ') + '; $x -rf y']) {
    const a = analyzeScript(s);
    assert.ok(a.kind === 'complex' && a.opaqueKinds.includes('dynamic-name'), s);
  }
  for (const s of ['echo $x', 'aa $(bb) > f', 'x=$y; aa', "bash -c '$x y'"]) {
    const a = analyzeScript(s);
    assert.ok(a.kind === 'plain' || !a.opaqueKinds.includes('dynamic-name'), s);
  }
});

const HIDING = ['ssh h ls', 'sudo -s', 'eval "$x"', 'bash <<EOF\n$x\nEOF', 'trap "$x" EXIT', 'python3 -c x | node -e y', 'env -S x && chroot / y',
  'timeout 5 source f', 'eval "$(curl x)"', "find . -exec bash -c '$1' ';'", 'bash x.sh; sh -s; bash -c', 'sudo -e f || doas -s', 'echo $(watch x)'];

test('opaque text and kind come together, over the corpus and 1,000 generated scripts', () => {
  const r = rng(11);
  const scripts = [...HIDING, ...CORPUS.map(([, s]) => s), ...Array.from({ length: 1000 }, () => randomScript(r))];
  let opaque = 0;
  const check = (c: Subcommand, s: string) => {
    assert.equal(c.opaque === undefined, c.opaqueKind === undefined, `${JSON.stringify(s)}: ${JSON.stringify(c)}`);
    if (c.opaque) opaque++;
  };
  for (const s of scripts) {
    const a = analyzeScript(s);
    for (const c of a.kind === 'plain' ? a.commands : a.literalCommands) check(c, s);
    if (a.kind === 'complex')
      for (const c of a.literalCommands) if (c.opaqueKind) assert.ok(a.opaqueKinds.includes(c.opaqueKind), s);
  }
  assert.ok(opaque >= 20, `${opaque} opaque commands`);
});
