/** Wrappers seen through with their own option grammars; programs that hide execution are opaque. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeScript, unwrapCommand } from '../../../src/script/analyze.js';

const w = (s: string) => s.split(' ');

test('each wrapper yields the inner command with its own option grammar', () => {
  const cases: [string[], string[][]][] = [
    [w('env rm -f x'), [w('rm -f x')]],
    [w('env -i -u HOME FOO=1 BAR=2 rm x'), [w('rm x')]],
    [w('env - --chdir /tmp --unset=X rm x'), [w('rm x')]],
    [w('env'), []],
    [w('timeout 5 rm x'), [w('rm x')]],
    [w('timeout -s KILL -k 2 --preserve-status 5s rm x'), [w('rm x')]],
    [w('timeout --signal=TERM 1m rm x'), [w('rm x')]],
    [w('nice -n 10 rm x'), [w('rm x')]],
    [w('nice -10 rm x'), [w('rm x')]],
    [w('nice --adjustment=5 rm x'), [w('rm x')]],
    // scheduling wrappers (they were opaque, and so asked: `taskset -c 0 make` denied with no approver)
    [w('taskset -c 0 rm x'), [w('rm x')]],
    [w('taskset 0x3 rm x'), [w('rm x')]],
    [w('taskset -a --cpu-list 0-1 rm x'), [w('rm x')]],
    [w('taskset -p 0x3 1234'), []],
    [w('ionice -c3 rm x'), [w('rm x')]],
    [w('ionice -c 2 -n 7 -t rm x'), [w('rm x')]],
    [w('ionice --class=idle rm x'), [w('rm x')]],
    [w('ionice -p 1234'), []],
    [w('chrt -f 10 rm x'), [w('rm x')]],
    [w('chrt --idle 0 rm x'), [w('rm x')]],
    [w('chrt -d -T 1000 -D 2000 0 rm x'), [w('rm x')]],
    [w('chrt -p 1234'), []],
    [w('chrt -m'), []],
    [w('nohup rm x'), [w('rm x')]],
    [w('nohup -- rm x'), [w('rm x')]],
    [w('stdbuf -oL -e 0 -i0 rm x'), [w('rm x')]],
    [w('stdbuf --output=L rm x'), [w('rm x')]],
    [w('time -p rm x'), [w('rm x')]],
    [w('time -f %e -o out rm x'), [w('rm x')]],
    [w('command -p rm x'), [w('rm x')]],
    [w('command -v rm'), []],
    [w('command -V rm'), []],
    [w('exec -a name -cl rm x'), [w('rm x')]],
    [w('builtin echo hi'), [w('echo hi')]],
    [w('sudo rm x'), [w('rm x')]],
    [w('sudo -u root -E -- rm x'), [w('rm x')]],
    [w('sudo -uroot -g wheel HOME=/x rm x'), [w('rm x')]],
    [w('sudo --user=root rm x'), [w('rm x')]],
    [w('sudo -l'), []],
    [w('doas -u root rm x'), [w('rm x')]],
    [w('doas -n rm x'), [w('rm x')]],
    [w('xargs rm'), [w('rm')]],
    [w('xargs -0 -n 1 -P 4 -I {} rm {}'), [w('rm {}')]],
    [w('xargs -d , --max-args=2 rm -f'), [w('rm -f')]],
    [w('xargs'), [w('echo')]],
    [w('xargs -i rm {}'), [w('rm {}')]],
    [w('xargs -l -e rm x'), [w('rm x')]],
    [w('xargs -iX -eEND rm X'), [w('rm X')]],
    [w('env -a name rm x'), [w('rm x')]],
    [w('sudo -R /srv -D /tmp rm x'), [w('rm x')]],
    [['find', '.', '-name', '*.o', '-exec', 'rm', '-f', '{}', ';'], [w('rm -f {}')]],
    [['find', '.', '-execdir', 'rm', '{}', '+', '-ok', 'mv', '{}', '/t', ';'], [w('rm {}'), w('mv {} /t')]],
    [w('find . -okdir shred {} ;'), [w('shred {}')]],
    [w('find . -name x'), []],
    [['bash', '-c', 'rm -rf x && ls'], [w('rm -rf x'), w('ls')]],
    [['/bin/sh', '-lc', 'rm x'], [w('rm x')]],
    [['bash', '-ec', 'rm x', 'arg0', 'arg1'], [w('rm x')]],
    [['zsh', '--norc', '-o', 'errexit', '-c', 'rm x'], [w('rm x')]],
    [['bash', '-c', '-e', 'rm x'], [w('rm x')]],
    // nesting: outermost first
    [w('sudo env -i nice -n 5 rm x'), [w('env -i nice -n 5 rm x'), w('nice -n 5 rm x'), w('rm x')]],
    [
      ['env', 'bash', '-c', "sudo rm -rf / ; bash -c 'shred y'"],
      [['bash', '-c', "sudo rm -rf / ; bash -c 'shred y'"], w('sudo rm -rf /'), w('rm -rf /'), ['bash', '-c', 'shred y'], w('shred y')],
    ],
    [w('xargs -0 sudo rm'), [w('sudo rm'), w('rm')]],
    [['find', '.', '-exec', 'env', 'rm', '{}', ';'], [w('env rm {}'), w('rm {}')]],
  ];
  for (const [argv, inner] of cases) {
    const u = unwrapCommand(argv);
    assert.deepEqual(u.inner, inner, argv.join(' '));
    assert.equal(u.opaque, undefined, argv.join(' '));
  }
});

test('programs that run strings or scripts we cannot see are opaque', () => {
  const cases: string[][] = [
    ['eval', 'rm -rf /'], ['source', 'x.sh'], ['.', 'x.sh'], ['su', '-c', 'rm x'], ['su'], ['ssh', 'host', 'rm x'],
    ['watch', 'rm x'], ['parallel', 'rm', ':::', 'a'], ['flock', '-c', 'rm x', 'lock'], ['script', '-c', 'rm x'],
    ['busybox', 'sh', '-c', 'rm x'], ['env', '-S', 'rm x'], ['env', '--split-string=rm x'], ['sudo', '-s', 'rm'], ['sudo', '-i'],
    ['doas', '-s'], ['bash', 'script.sh'], ['bash'], ['sh', '-s'], ['python3', '-c', 'import os'], ['perl', '-e', 'system 1'],
    ['node', '-e', 'x'], ['bash', '-c', 'echo $(rm x)'], ['sudo', 'eval', 'x'], ['xargs', 'sh', '-c', 'rm $1'], ['chroot', '/', 'rm'],
    ['bash', '-c'],
  ];
  for (const argv of cases) assert.ok(unwrapCommand(argv).opaque, argv.join(' '));
  // a complex nested script still yields its literal commands
  const u = unwrapCommand(['bash', '-c', 'echo $(shred x)']);
  assert.ok(u.inner.some((a) => a[0] === 'shred'));
  assert.match(u.opaque ?? '', /complex/);
});

test('busybox/toybox: an applet is judged as itself, a shell applet stays opaque with its script still parsed', () => {
  for (const bb of ['busybox', '/usr/bin/busybox', 'toybox']) {
    const rm = unwrapCommand([bb, 'rm', 'x']);
    assert.deepEqual(rm.inner, [w('rm x')], bb);
    assert.equal(rm.opaque, undefined, bb);
    for (const shell of ['sh', 'ash', 'hush', '/bin/sh']) {
      const u = unwrapCommand([bb, shell, '-c', 'rm x']);
      assert.ok(u.opaque, `${bb} ${shell} -c`);
      assert.equal(u.opaqueKind, 'shell', `${bb} ${shell} -c`);
      // hush is busybox's own shell, not parsed: opaque only
      if (shell !== 'hush') assert.ok(u.inner.some((a) => a.join(' ') === 'rm x'), `${bb} ${shell} -c`);
    }
    assert.ok(unwrapCommand([bb]).opaque, bb);
    assert.ok(unwrapCommand([bb, '--install', '-s', '/tmp/x']).opaque, bb);
  }
  // the loader runs a real shell, whose commands exec as usual: seen through like bash -c
  assert.deepEqual(unwrapCommand(['ld.so', '/bin/bash', '-c', 'rm x']).inner, [['/bin/bash', '-c', 'rm x'], w('rm x')]);
});

test('in a script, wrappers fill Subcommand.inner and opaque', () => {
  const a = analyzeScript("sudo -u bob env rm -f x && ssh host 'ls' && bash -c 'git push --force'");
  assert.equal(a.kind, 'plain');
  if (a.kind !== 'plain') return;
  assert.deepEqual(a.commands[0].inner, [w('env rm -f x'), w('rm -f x')]);
  assert.match(a.commands[1].opaque ?? '', /ssh/);
  assert.deepEqual(a.commands[2].inner, [w('git push --force')]);
  assert.deepEqual(a.ops, ['&&', '&&']);
});

test("a word known only at run time keeps its place when a wrapper is unwrapped: the wrapper's grammar is not shifted", () => {
  const inner = (s: string) => {
    const a = analyzeScript(s);
    assert.equal(a.kind, 'complex', s);
    return a.literalCommands[0];
  };
  // the skipped word was an option value: before, `rm` was taken for timeout's duration and `-rf x` ran
  assert.deepEqual(inner('timeout "$t" rm -rf x').inner, [w('rm -rf x')]);
  assert.deepEqual(inner('nice -n "$n" rm -rf x').inner, [w('rm -rf x')]);
  assert.deepEqual(inner('exec -a "$n" rm -rf x').inner, [w('rm -rf x')]);
  assert.deepEqual(inner('sudo -u "$u" env "$V=1" rm x').inner, [w('env rm x'), w('rm x')]);
  // a run-time word where a program could be (`env "$V=1"` is an assignment): the words after it are still
  // checked as a command, as before
  assert.deepEqual(inner('env "$V=1" rm -f y').inner, [w('rm -f y')]);
  assert.deepEqual(inner('timeout 5 "$cmd" rm').inner, [w('rm')]);
  // Codex's literal argv stays as Codex keeps it (run-time words skipped)
  assert.deepEqual(inner('timeout "$t" rm -rf x').argv, w('timeout rm -rf x'));
  // a shell whose script is a run-time word stays opaque, and says so without the placeholder
  assert.equal(inner('bash -c "$x"').opaque, 'bash -c with a script known only at run time');
  assert.doesNotMatch(inner('nice -n 1 bash "$f"').opaque ?? '', /\u0000/);
});

test('eval, source and . of what is only known at run time: complex, commands still extracted', () => {
  // (a relative file is looked up in PATH by bash; with no reader no file is read)
  for (const [s, inner] of [
    ['eval "$x"', 'eval'],
    ['source f.sh && ls', 'source'],
    ['. f.sh', '.'],
    ['source /etc/f.sh', 'source'],
    ['command eval ls', 'eval'],
    ['builtin source f', 'source'],
  ]) {
    const a = analyzeScript(s);
    assert.equal(a.kind, 'complex', s);
    if (a.kind === 'complex') assert.ok(a.literalCommands.some((c) => c.argv[0] === inner), s);
  }
  for (const s of ["trap '' INT", 'trap - EXIT', 'trap -p']) assert.equal(analyzeScript(s).kind, 'plain', s);
});

test('builtins that expand a subscript or run a callback from literal words: complex', () => {
  // each of these runs `rm x` in bash 5.2, although every word is quoted
  for (const s of [
    "unset 'a[$(rm x)]'",
    "test -v 'a[$(rm x)]'",
    "[ -v 'a[`rm x`]' ]",
    "printf -v 'a[$(rm x)]' y",
    "printf -v'a[$(rm x)]' y",
    "read 'a[$(rm x)]'",
    "mapfile -C 'rm x' -c 1 a",
    "readarray -tC 'rm x' a",
    "compgen -C 'rm x' w",
    'jobs -x rm x',
    "command unset 'a[$(rm x)]'",
  ])
    assert.equal(analyzeScript(s).kind, 'complex', s);
  for (const s of ["printf '%s' 'a[$(x)]'", "echo 'a[$(x)]'", 'test -f a[1]'.replace('a[1]', "'a[1]'"), 'unset a', 'read -r line'])
    assert.equal(analyzeScript(s).kind, 'plain', s);
});

test('program names that are Object.prototype keys are ordinary programs', () => {
  for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'])
    assert.deepEqual(unwrapCommand([name, '-u', 'x', 'rm']), { inner: [] }, name);
  const a = analyzeScript('constructor x && toString y');
  assert.ok(a.kind === 'plain' && a.commands.every((c) => c.inner.length === 0 && !c.opaque));
});

test('nested shells deeper than the limit are opaque, not a stack overflow', () => {
  let s = 'rm x';
  for (let i = 0; i < 11; i++) s = `bash -c ${"'" + s.replace(/'/g, "'\\''") + "'"}`;
  const u = unwrapCommand(['bash', '-c', s]);
  assert.ok(u.opaque);
});
