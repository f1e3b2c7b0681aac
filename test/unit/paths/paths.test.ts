/**
 * One GATE_HOME, CODEX_HOME and runtime folder whatever the caller's environment: HOME spelled through a
 * symlink or with a trailing slash, XDG_RUNTIME_DIR present or not. Real folders; runtime roots of our own
 * (a /run/user-like and a /tmp-like folder) so the machine's are left alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexHome, gateHome, gatePaths, runtimeDir } from '../../../src/paths/paths.js';
import { gateHome as policyGateHome, codexHome as policyCodexHome } from '../../../src/rules/load.js';

test('HOME spelled through a symlink, with a trailing slash or with ..: one GATE_HOME and CODEX_HOME, computed in one place', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'g-')));
  try {
    mkdirSync(join(dir, 'h'));
    symlinkSync(join(dir, 'h'), join(dir, 'l'));
    const spellings = [join(dir, 'h'), join(dir, 'h') + '/', join(dir, 'l'), join(dir, 'l') + '//', join(dir, 'l', '..', 'h')];
    for (const HOME of spellings) {
      assert.equal(gateHome({ HOME }), join(dir, 'h', '.gate-sh'), HOME);
      assert.equal(codexHome({ HOME }), join(dir, 'h', '.codex'), HOME);
      assert.equal(policyGateHome({ HOME }), gateHome({ HOME }));
      assert.equal(policyCodexHome({ HOME }), codexHome({ HOME }));
    }
    // explicit folders are canonical too, existing or not yet
    assert.equal(gateHome({ GATE_HOME: join(dir, 'l', 'gh') + '/' }), join(dir, 'h', 'gh'));
    assert.equal(codexHome({ CODEX_HOME: join(dir, 'l') }), join(dir, 'h'));
    // the runtime folder does not depend on HOME at all
    const env = { XDG_RUNTIME_DIR: join(dir, 'l') + '/' };
    assert.equal(gatePaths({ ...env, HOME: '/nonexistent' }).requestSock, gatePaths({ ...env, HOME: join(dir, 'h') }).requestSock);
    assert.equal(gatePaths(env).runtime, join(dir, 'h', 'gate-sh'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('runtime folder: XDG_RUNTIME_DIR, else /run/user/<uid> when ours and not writable by others (so both agree), else /tmp/gate-sh-<uid> checked', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'g-')));
  try {
    const uid = process.getuid!();
    const roots = { runUser: join(dir, 'run-user'), tmp: join(dir, 'tmp'), uid };
    mkdirSync(roots.tmp);
    const session = join(roots.runUser, String(uid));
    mkdirSync(session, { recursive: true, mode: 0o700 });
    // a login session's XDG_RUNTIME_DIR and an agent's environment without it agree
    assert.equal(runtimeDir({}, roots), join(session, 'gate-sh'));
    assert.equal(runtimeDir({ XDG_RUNTIME_DIR: session }, roots), join(session, 'gate-sh'));
    // writable by others: not used, the per-uid folder under tmp instead
    chmodSync(session, 0o775);
    assert.equal(runtimeDir({}, roots), join(roots.tmp, `gate-sh-${uid}`));
    rmSync(session, { recursive: true });
    assert.equal(runtimeDir({}, roots), join(roots.tmp, `gate-sh-${uid}`));
    // a relative XDG_RUNTIME_DIR is no runtime folder (the spec wants an absolute path)
    assert.equal(runtimeDir({ XDG_RUNTIME_DIR: 'rel' }, roots), join(roots.tmp, `gate-sh-${uid}`));
    // under a shared tmp: someone else's, writable by others, or a symlink is refused
    const tmpRuntime = join(roots.tmp, `gate-sh-${uid}`);
    mkdirSync(tmpRuntime, { mode: 0o700 });
    assert.equal(runtimeDir({}, roots), tmpRuntime);
    chmodSync(tmpRuntime, 0o755); // others may look (a sandbox's empty tmpfs over it is 0755)
    assert.equal(runtimeDir({}, roots), tmpRuntime);
    chmodSync(tmpRuntime, 0o777);
    assert.throws(() => runtimeDir({}, roots), /refusing the runtime folder: .* is writable by others \(mode 777\)/);
    chmodSync(tmpRuntime, 0o700);
    chownSync(tmpRuntime, 65534, 65534); // root here: a folder another user made first
    assert.throws(() => runtimeDir({}, roots), new RegExp(`refusing the runtime folder: .* belongs to uid 65534, not ${uid}`));
    rmSync(tmpRuntime, { recursive: true });
    symlinkSync(dir, tmpRuntime);
    assert.throws(() => runtimeDir({}, roots), /refusing the runtime folder: .* is not a folder \(a symbolic link\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
