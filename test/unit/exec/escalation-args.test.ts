/**
 * src/exec/escalation-args.ts: a caller's --escalate / --with-permissions / --justification become the
 * pre-flight's fields, paths resolved against the cwd and home, and the mistakes a person would make are
 * refused with a message naming the flag; --sandbox becomes the call's sandbox at most. Pure; test only, no
 * trust boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPermissionPaths, EscalationArgsError, escalationFields, parseProfileArg, sandboxAtMost } from '../../../src/exec/escalation-args.js';
import { parseShellArgs } from '../../../src/exec/gate-sh-args.js';

const CWD = '/work/proj';
const HOME = '/home/u';

test('nothing asked: use_default, and a justification alone is refused', () => {
  assert.deepEqual(escalationFields({}, CWD, HOME), { sandbox_permissions: 'use_default' });
  assert.throws(() => escalationFields({ justification: 'why' }, CWD, HOME), /--justification goes with --escalate or --with-permissions/);
});

test('--escalate: require_escalated, with the justification when it says something', () => {
  assert.deepEqual(escalationFields({ escalate: true, justification: 'needs the network' }, CWD, HOME), {
    sandbox_permissions: 'require_escalated',
    justification: 'needs the network',
  });
  assert.deepEqual(escalationFields({ escalate: true, justification: '   ' }, CWD, HOME), { sandbox_permissions: 'require_escalated' });
});

test('--escalate and --with-permissions exclude each other', () => {
  assert.throws(() => escalationFields({ escalate: true, withPermissions: '{}' }, CWD, HOME), EscalationArgsError);
});

test('--with-permissions: paths resolved against the cwd and ~, normalised, trailing slashes and duplicates dropped', () => {
  const f = escalationFields({ withPermissions: '{"network":true,"file_system":{"read":["~/.cache","../lib/"],"write":["out","./out/"]}}' }, CWD, HOME);
  assert.deepEqual(f, {
    sandbox_permissions: 'with_additional_permissions',
    additional_permissions: { network: true, file_system: { read: ['/home/u/.cache', '/work/lib'], write: ['/work/proj/out'] } },
  });
  assert.deepEqual(parseProfileArg('{}', CWD, HOME), { network: false });
  assert.deepEqual(parseProfileArg('{"file_system":{}}', CWD, HOME), { network: false });
});

test('--with-permissions: write access to / is no sandbox', () => {
  assert.throws(() => parseProfileArg('{"file_system":{"write":["/"]}}', CWD, HOME), /write access to '\/' is not a sandbox/);
  assert.throws(() => parseProfileArg('{"file_system":{"write":["../../.."]}}', CWD, HOME), /not a sandbox/);
  // reading / is a narrower thing to ask, and allowed through to the daemon's decision
  assert.deepEqual(parseProfileArg('{"file_system":{"read":["/"]}}', CWD, HOME).file_system, { read: ['/'] });
});

test('--with-permissions: malformed input names what is wrong', () => {
  const cases: [string, RegExp][] = [
    ['not json', /not JSON/],
    ['[]', /expected an object/],
    ['null', /expected an object/],
    ['{"net":true}', /unknown key 'net'/],
    ['{"network":"yes"}', /network must be true or false/],
    ['{"file_system":[]}', /file_system must be an object/],
    ['{"file_system":{"exec":[]}}', /unknown key 'file_system.exec'/],
    ['{"file_system":{"read":"/x"}}', /file_system.read must be a list of paths/],
    ['{"file_system":{"write":[""]}}', /file_system.write must be a list of paths/],
  ];
  for (const [json, re] of cases) assert.throws(() => parseProfileArg(json, CWD, HOME), re, json);
});

test('checkPermissionPaths: a path that does not exist is refused before anyone is asked', () => {
  const fields = escalationFields({ withPermissions: '{"file_system":{"read":["/a"],"write":["/b"]}}' }, CWD, HOME);
  const present = new Set(['/a', '/b']);
  checkPermissionPaths(fields, (p) => present.has(p));
  present.delete('/b');
  assert.throws(() => checkPermissionPaths(fields, (p) => present.has(p)), /--with-permissions: '\/b' does not exist/);
  // nothing to check without a profile
  checkPermissionPaths(escalationFields({ escalate: true }, CWD, HOME), () => false);
});

test('--sandbox: a mode or a policy object, writable roots against the cwd and ~; what cannot be read is refused naming the flag', () => {
  assert.deepEqual(sandboxAtMost('read-only', CWD, HOME), { type: 'read-only' });
  assert.deepEqual(sandboxAtMost('{"type":"workspace-write","writable_roots":["out/","~/cache","/abs"],"network_access":false}', CWD, HOME), {
    type: 'workspace-write',
    writable_roots: ['/work/proj/out', '/home/u/cache', '/abs'],
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  });
  for (const [arg, re] of [
    ['bogus', /--sandbox: invalid sandbox policy 'bogus'/],
    ['{"type":', /--sandbox: not JSON/],
    ['{"type":"workspace-write","writable_roots":"/x"}', /--sandbox: invalid sandbox policy: writable_roots must be a list of paths/],
  ] as const)
    assert.throws(() => sandboxAtMost(arg, CWD, HOME), (e: Error) => e instanceof EscalationArgsError && re.test(e.message), arg);
  // gate-sh's own flag, read as bash reads its long options (before the shell options)
  assert.equal(parseShellArgs(['--sandbox', 'read-only', '-lc', 'true']).sandbox, 'read-only');
  assert.throws(() => parseShellArgs(['--sandbox']), /--sandbox: option requires an argument/);
});
