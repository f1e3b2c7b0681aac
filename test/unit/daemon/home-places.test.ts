// The homes stay where the daemon found them (src/daemon/home-places.ts): a folder above a home moved aside and
// made again fails the check, a home missing at the start and made later does not. Temporary folders; no
// processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HomePlaces } from '../../../src/daemon/home-places.js';

test('HomePlaces: the same folders pass; a folder above a home moved aside and made again, or gone, fails; one made later passes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'places-'));
  try {
    const gate = join(dir, 'u', '.gate-sh');
    const codex = join(dir, 'u', '.codex');
    mkdirSync(gate, { recursive: true });
    const places = new HomePlaces([gate, codex]);
    places.check();
    // (missing when the daemon started: the guard makes it later)
    mkdirSync(codex);
    places.check();
    renameSync(join(dir, 'u'), join(dir, 'u.moved'));
    assert.throws(() => places.check(), /\.gate-sh: the folder .*\/u is not the one the daemon started with \(moved or replaced while it ran\)/);
    mkdirSync(gate, { recursive: true });
    assert.throws(() => places.check(), /not the one the daemon started with/);
    // put back: the same folders again
    rmSync(join(dir, 'u'), { recursive: true });
    renameSync(join(dir, 'u.moved'), join(dir, 'u'));
    places.check();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
