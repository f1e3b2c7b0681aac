/**
 * The sandbox builders' memo of the filesystem (src/sandbox/fs-view.ts, memoFs): a path that appears
 * between two questions about it (another gated run made CODEX_HOME meanwhile) is never taken for a
 * dangling symlink, nor taken for missing once it is seen to exist. Pure: a plain-data filesystem changed
 * between the calls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeFs, memoFs, type FsView } from '../../../src/sandbox/fs-view.js';
import type { MountOp } from '../../../src/sandbox/mounts.js';
import { firstMissing, hidePath, protectExtra, protectRoot } from '../../../src/sandbox/protected.js';

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

/** A filesystem where `made` appears right after the first question about its real path (found missing). */
function appearsAfterRealpath(made: string): FsView {
  const entries: Record<string, string> = { '/t': 'dir' };
  if (made.startsWith('/t/ch/')) entries['/t/ch'] = 'dir';
  const fs = fakeFs(entries);
  return {
    ...fs,
    realpath: (p) => {
      const r = fs.realpath(p);
      if (p === made && r === null) entries[made] = 'dir';
      return r;
    },
  };
}

const WRITABLE: MountOp[] = [{ op: 'bind', src: '/', dest: '/' }];

test('a path missing for its real path and there for its kind (made in between) is protected and hidden as the folder it now is', () => {
  for (const made of ['/t/ch', '/t/ch/rules']) {
    assert.deepEqual(protectExtra(made, WRITABLE, memoFs(appearsAfterRealpath(made))), [{ op: 'ro-bind', src: made, dest: made }]);
    assert.deepEqual(hidePath(made, WRITABLE, memoFs(appearsAfterRealpath(made))), [{ op: 'empty-ro', dest: made }]);
    const fs = memoFs(appearsAfterRealpath(made));
    assert.equal(fs.realpath(made), null);
    assert.equal(firstMissing(made, fs), null);
  }
  // still missing: the first missing component, as before
  const fs = memoFs(fakeFs({ '/t': 'dir' }));
  assert.equal(firstMissing('/t/ch/rules', fs), '/t/ch');
  assert.deepEqual(protectExtra('/t/ch/rules', WRITABLE, fs), [{ op: 'empty-ro', dest: '/t/ch' }]);
});

test("a protected entry removed between the questions about it is a missing one, not a 'dangling symlink'", () => {
  const entries: Record<string, string> = { '/w': 'dir', '/w/.git': 'dir', '/w/.claude': 'dir' };
  const base = fakeFs(entries);
  const fs: FsView = {
    ...base,
    kind: (p) => {
      const k = base.kind(p);
      if (p === '/w/.git' || p === '/w/.claude') delete entries[p]; // removed right after it was seen
      return k;
    },
  };
  // both are then missing ones: no mount (and no placeholder), the daemon watches them instead
  assert.deepEqual(protectRoot('/w', memoFs(fs), { names: ['.git', '.codex', '.claude'] }), []);
  // present all along: bound read-only; a symlink without a target: refused
  assert.deepEqual(protectRoot('/w', memoFs(fakeFs({ '/w': 'dir', '/w/.claude': 'dir' })), {}), [
    { op: 'ro-bind', src: '/w/.claude', dest: '/w/.claude' },
  ]);
  assert.throws(() => protectRoot('/w', memoFs(fakeFs({ '/w': 'dir', '/w/.codex': '->/nowhere' })), {}), /dangling symlink/);
});
