/**
 * The sandbox builders' memo of the filesystem (src/sandbox/fs-view.ts, memoFs): a path that appears
 * between two questions about it (another gated run made CODEX_HOME meanwhile) is never taken for a
 * dangling symlink. Pure: a plain-data filesystem changed between the calls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeFs, memoFs } from '../../src/sandbox/fs-view.js';
import { firstMissing } from '../../src/sandbox/protected.js';

test('a folder made after its real path was asked: its kind and real path agree, and protecting a path below it works', () => {
  const entries: Record<string, string> = { '/t': 'dir' };
  const fs = memoFs(fakeFs(entries));
  assert.equal(fs.realpath('/t/ch'), null);
  entries['/t/ch'] = 'dir';
  assert.equal(fs.kind('/t/ch'), 'dir');
  assert.equal(fs.realpath('/t/ch'), '/t/ch');
  assert.equal(firstMissing('/t/ch/rules', fs), '/t/ch/rules');
});

test('a folder made after its kind was asked: the real path that finds it is believed, and the kind asked again', () => {
  const entries: Record<string, string> = { '/t': 'dir' };
  const fs = memoFs(fakeFs(entries));
  assert.equal(fs.kind('/t/ch'), null);
  entries['/t/ch'] = 'dir';
  assert.equal(fs.realpath('/t/ch'), '/t/ch');
  assert.equal(fs.kind('/t/ch'), 'dir');
});

test('a real dangling symlink is still one', () => {
  const fs = memoFs(fakeFs({ '/t': 'dir', '/t/ch': '->/nowhere' }));
  assert.equal(fs.realpath('/t/ch'), null);
  assert.equal(fs.kind('/t/ch'), 'symlink');
  assert.throws(() => firstMissing('/t/ch/rules', fs), /dangling symlink/);
});
