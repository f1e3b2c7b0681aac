/**
 * eval of literal words, trap strings and sourced files are read as the scripts they are (issue 14): their
 * commands are judged, the builtin itself hides nothing. What is only known at run time stays opaque.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeScript } from '../../../src/script/analyze.js';

const b64 = (s: string) => Buffer.from(s).toString('base64').replace(/(.{76})/g, '$1\n');

/** The literal commands of a script (which must be complex: eval, trap and source keep it so). */
function literal(script: string, readSource?: (p: string) => string | null): { names: string[]; kinds: string[]; a: ReturnType<typeof analyzeScript> } {
  const a = analyzeScript(script, readSource ? { readSource } : {});
  assert.equal(a.kind, 'complex', script);
  return a.kind === 'complex' ? { names: a.literalCommands.map((c) => c.argv.join(' ')), kinds: a.opaqueKinds, a } : { names: [], kinds: [], a };
}

test('eval of literal words: its commands are literal commands, eval itself hides nothing', () => {
  const { names, kinds } = literal("eval 'git status && echo ok'");
  assert.deepEqual(names, ['git status', 'echo ok', 'eval git status && echo ok']);
  assert.deepEqual(kinds, []);
  // eval joins its words with spaces
  assert.deepEqual(literal('eval git status "&&" echo ok').names.slice(0, 2), ['git status', 'echo ok']);
  // the variables its commands set stay with them (judged for code loading)
  const v = literal("eval 'LD_PRELOAD=/tmp/x.so git status'").a;
  assert.ok(v.kind === 'complex' && v.literalCommands[0].assignments.includes('LD_PRELOAD=/tmp/x.so'));
  // an opaque command inside stays opaque
  assert.deepEqual(literal("eval 'python3 -c 1'").kinds, ['inline-code']);
  // `--` ends eval's options; any other option is no script
  assert.ok(literal("eval -- 'rm -rf x'").names.includes('rm -rf x'));
  assert.deepEqual(literal("eval -x 'rm -rf x'").kinds, ['eval']);
});

test('eval of a complex literal script: the script is complex, its commands are literal commands, nothing opaque', () => {
  const a = analyzeScript("eval 'f() { rm -rf x; }; for i in 1; do f; done'");
  assert.equal(a.kind, 'complex');
  if (a.kind !== 'complex') return;
  assert.ok(a.literalCommands.some((c) => c.argv[0] === 'rm'));
  assert.deepEqual(a.opaqueKinds, []);
  // a name only known at run time inside it is still a dynamic name
  const d = analyzeScript("eval 'x=r; ${x}m -rf y'");
  assert.ok(d.kind === 'complex' && d.opaqueKinds.includes('dynamic-name'));
  // eval of a variable, or a parse error in the string: opaque, as before
  for (const s of ['eval "$cmd"', "eval 'if then'", 'eval "$(curl x)"']) {
    const u = analyzeScript(s);
    assert.ok(u.kind === 'complex' && u.opaqueKinds.includes('eval'), s);
  }
});

test('eval "$(echo B64 | base64 -d)" is read as the text it decodes to (Claude Code snapshot functions)', () => {
  const a = analyzeScript(`eval "$(echo '${b64('rm -rf somefile')}' | base64 -d)"`);
  assert.ok(a.kind === 'complex' && a.literalCommands.some((c) => c.argv.join(' ') === 'rm -rf somefile'));
  assert.ok(a.kind === 'complex' && !a.opaqueKinds.includes('eval'));
  // not canonical base64, or another pipeline: opaque
  for (const s of [`eval "$(echo 'cm0g!!' | base64 -d)"`, `eval "$(echo '${b64('ls')}' | base64 -d | sh)"`, `eval "$(echo '${b64('ls')}' | base32 -d)"`]) {
    const u = analyzeScript(s);
    assert.ok(u.kind === 'complex' && u.opaqueKinds.includes('eval'), s);
  }
});

test('trap with a literal command string: its commands are judged, complex strings make the script complex', () => {
  assert.deepEqual(literal("trap 'rm x' EXIT"), { ...literal("trap 'rm x' EXIT"), names: ['rm x', 'trap rm x EXIT'], kinds: [] });
  // gemini-cli's wrapper string
  const g = analyzeScript(`trap 'jobs -p > "$_bgpids_file"' EXIT`);
  assert.equal(g.kind, 'complex');
  assert.ok(g.kind === 'complex' && g.opaqueKinds.length === 0 && g.literalCommands.some((c) => c.argv[0] === 'jobs'));
  for (const s of ["trap '' INT", 'trap - EXIT', 'trap -p']) assert.equal(analyzeScript(s).kind, 'plain', s);
  // `--` ends trap's options: still a command string (it was neither read nor opaque before)
  assert.ok(literal("trap -- 'rm -rf x' EXIT").names.includes('rm -rf x'));
  assert.deepEqual(literal('trap -- "$x" EXIT').kinds, ['command-string']);
});

test('source of an absolute file read now: what runs is judged, function bodies only define, PATH is the agent’s', () => {
  const files: Record<string, string> = {
    '/snap.sh': [
      '# Snapshot file',
      'unalias -a 2>/dev/null || true',
      `eval "$(echo '${b64('f () \n{ \n    rm -rf "$1"\n}')}' | base64 -d)" > /dev/null 2>&1`,
      'shopt -s expand_aliases',
      "alias -- ll='ls -l'",
      'g() { rm -rf /; }',
      'if ! (unalias rg 2>/dev/null; command -v rg) >/dev/null 2>&1; then',
      "  alias rg='/opt/rg'",
      'fi',
      "export PATH='/home/u/.local/bin:/usr/bin'",
    ].join('\n'),
    '/runs.sh': 'echo hi\nrm -rf somefile\n',
    '/broken.sh': 'if then fi (',
  };
  const readSource = (p: string) => files[p] ?? null;
  const a = analyzeScript("source /snap.sh && eval 'git status'", { readSource });
  assert.equal(a.kind, 'complex');
  if (a.kind !== 'complex') return;
  assert.deepEqual(a.opaqueKinds, [], a.reasons.join('; '));
  const names = a.literalCommands.map((c) => c.argv.join(' '));
  assert.ok(!names.some((n) => n.startsWith('rm')), `function bodies are not commands: ${names.join(', ')}`);
  assert.ok(names.includes('git status') && names.includes('shopt -s expand_aliases'), names.join(', '));
  assert.ok(!names.some((n) => n.includes('PATH=')), names.join(', '));
  // a file that runs rm: rm is a command of the script
  assert.deepEqual(literal('source /runs.sh', readSource).names, ['echo hi', 'rm -rf somefile', 'source /runs.sh']);
  // unreadable, unparseable, relative: opaque, never safe
  for (const s of ['source /missing.sh', '. /broken.sh', 'source runs.sh']) {
    const u = analyzeScript(s, { readSource });
    assert.ok(u.kind === 'complex' && u.opaqueKinds.includes('source'), s);
  }
});
