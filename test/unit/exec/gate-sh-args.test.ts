import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArgsError, parseShellArgs } from '../../../src/exec/gate-sh-args.js';

const P = (...a: string[]) => parseShellArgs(a, '/usr/bin/gate-sh');

test('-c SCRIPT NAME ARGS: $0 and $1.. as bash sets them', () => {
  const i = P('-c', 'echo "$0 $1"', 'me', 'a', 'b');
  assert.deepEqual(i.source, { kind: 'command', script: 'echo "$0 $1"' });
  assert.equal(i.name, 'me');
  assert.deepEqual(i.args, ['a', 'b']);
  assert.equal(P('-c', 'true').name, '/usr/bin/gate-sh');
});

test('combined short flags: -lc, -ec, -xc, -elc, and -c anywhere before the command string', () => {
  assert.equal(P('-lc', 'x').login, true);
  assert.deepEqual(P('-ec', 'x').setOptions, ['-e']);
  assert.deepEqual(P('-xc', 'x').setOptions, ['-x']);
  const i = P('-elc', 'x');
  assert.equal(i.login, true);
  assert.deepEqual(i.setOptions, ['-e']);
  // bash: -c is a flag; the command string is the first non-option argument
  const j = P('-c', '-x', 'echo hi', 'n');
  assert.deepEqual(j.source, { kind: 'command', script: 'echo hi' });
  assert.deepEqual(j.setOptions, ['-x']);
  assert.equal(j.name, 'n');
});

test('-o and -O take a value, +x turns off, -- and - end options', () => {
  const i = P('-o', 'pipefail', '+o', 'braceexpand', '-O', 'extglob', '+u', '-c', 'x');
  assert.deepEqual(i.setOptions, ['-o', 'pipefail', '+o', 'braceexpand', '+u']);
  assert.deepEqual(i.shoptOptions, ['-O', 'extglob']);
  assert.deepEqual(P('-eo', 'pipefail', '-c', 'x').setOptions, ['-e', '-o', 'pipefail']);
  assert.deepEqual(P('--', '-script.sh', 'a').source, { kind: 'file', path: '-script.sh' });
  assert.deepEqual(P('-', 'f.sh').source, { kind: 'file', path: 'f.sh' });
});

test('script file with arguments; stdin with and without -s; -i', () => {
  const f = P('./build.sh', 'x', 'y');
  assert.deepEqual(f.source, { kind: 'file', path: './build.sh' });
  assert.equal(f.name, './build.sh');
  assert.deepEqual(f.args, ['x', 'y']);
  assert.deepEqual(P().source, { kind: 'stdin' });
  const s = P('-s', 'a', 'b');
  assert.deepEqual(s.source, { kind: 'stdin' });
  assert.deepEqual(s.args, ['a', 'b']);
  assert.equal(P('-i').interactive, true);
  assert.equal(P('-l').login, true);
});

test('long options before short ones; values of --rcfile; --login, --help, --version', () => {
  const i = P('--norc', '--noprofile', '--rcfile', '/x', '--login', '-c', 'x');
  assert.deepEqual(i.longOptions, ['--norc', '--noprofile', '--rcfile', '/x']);
  assert.equal(i.login, true);
  assert.equal(P('--help').info, 'help');
  assert.equal(P('--version').info, 'version');
});

test('bad invocations are errors that name the option (bash exits 2 on them)', () => {
  assert.throws(() => P('-c'), (e: unknown) => e instanceof ArgsError && /-c: option requires an argument/.test(e.message));
  assert.throws(() => P('-Z'), /-Z: invalid option/);
  assert.throws(() => P('--frobnicate'), /--frobnicate: invalid option/);
  assert.throws(() => P('-o'), /-o: option requires an argument/);
  assert.throws(() => P('--rcfile'), /--rcfile: option requires an argument/);
});

test('--pty and --no-pty choose PTY hosting; absent, gate-sh decides by whether stdin and stdout are terminals', () => {
  assert.equal(parseShellArgs(['--pty', '-c', 'ls']).pty, true);
  assert.equal(parseShellArgs(['--no-pty', '-c', 'ls']).pty, false);
  assert.equal(parseShellArgs(['-c', 'ls']).pty, undefined);
  // after the command string it is $0, as any word there is for bash
  const late = parseShellArgs(['-c', 'ls', '--pty']);
  assert.equal(late.pty, undefined);
  assert.equal(late.name, '--pty');
});
