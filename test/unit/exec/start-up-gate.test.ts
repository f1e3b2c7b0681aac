/**
 * The pure parts of src/exec/start-up-gate.ts (the client's half of the start-up phase): when bash will
 * read start-up files and the prefix can stay invisible, what the start-up request carries, and the prefix
 * itself. (The phase end over real pipes is test/sandbox/start-up.test.ts.) Pure; test only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseShellArgs } from '../../../src/exec/gate-sh-args.js';
import { readsStartUpFiles, startUpFields, startUpPrefix } from '../../../src/exec/start-up-gate.js';

const inv = (...argv: string[]) => parseShellArgs(argv, 'gate-sh');

test('a login shell or BASH_ENV reads start-up files; a plain -c without BASH_ENV does not', () => {
  assert.equal(readsStartUpFiles(inv('-lc', 'true'), {}), true);
  assert.equal(readsStartUpFiles(inv('-c', 'true'), { BASH_ENV: '/home/u/.bashenv' }), true);
  assert.equal(readsStartUpFiles(inv('-c', 'true'), {}), false);
  assert.equal(readsStartUpFiles(inv('--noprofile', '-lc', 'true'), {}), false);
});

test('xtrace or verbose (flags, -o, SHELLOPTS) would show the prefix: those runs keep the strict start-up', () => {
  assert.equal(readsStartUpFiles(inv('-x', '-lc', 'true'), {}), false);
  assert.equal(readsStartUpFiles(inv('-v', '-lc', 'true'), {}), false);
  assert.equal(readsStartUpFiles(inv('-o', 'xtrace', '-lc', 'true'), {}), false);
  assert.equal(readsStartUpFiles(inv('-lc', 'true'), { SHELLOPTS: 'braceexpand:verbose' }), false);
  assert.equal(readsStartUpFiles(inv('-o', 'pipefail', '-lc', 'true'), { SHELLOPTS: 'braceexpand' }), true);
});

test('an interactive shell never has the phase', () => {
  assert.equal(readsStartUpFiles(inv('-i', '-l'), {}), false);
});

test('startUpFields: the key, the exported functions by name, and HOME, BASH_ENV, TMPDIR when set', () => {
  assert.deepEqual(startUpFields('k', { HOME: '/home/u', 'BASH_FUNC_f%%': '() { :; }', PATH: '/bin', TMPDIR: '/tmp/x' }), {
    key: 'k',
    functions: ['BASH_FUNC_f%%'],
    home: '/home/u',
    tmpdir: '/tmp/x',
  });
  assert.deepEqual(startUpFields('k', {}), { key: 'k', functions: [] });
});

test('startUpPrefix: builtins only, on one line, and 126 before the script when no go comes', () => {
  const p = startUpPrefix({ ready: 7, go: 8 });
  assert.ok(!p.includes('\n'));
  assert.match(p, /builtin printf \. >&7/);
  assert.match(p, /builtin read -r -N 1 -u 8 __gate_go \|\| builtin exit 126/);
  // every command of the prefix is a builtin, so none of it is exec'd (and judged); the descriptors are closed
  // for good (`builtin exec` would undo its redirections when it returns)
  for (const cmd of p.replace(/^\{ | \}; $/g, '').split(/; | \|\| /)) assert.match(cmd, /^(builtin |command exec )/, cmd);
  assert.match(p, /command exec 7>&- 8<&-; \}; $/);
});
