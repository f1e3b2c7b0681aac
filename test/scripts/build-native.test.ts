/**
 * scripts/build-native.mjs (npm install's `install` step): a failed native build stops with the compiler's
 * own message and what to install, and leaves no half-built output. Each case builds a copy of the native
 * sources in a temp folder. (A clean build, with warnings as errors under .ci/run's GATE_WERROR=1, is the
 * install step of test/scripts/pack-install.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const HINT = 'apt-get install -y make gcc python3';

/** npm's own node-gyp, as npm names it to lifecycle scripts (a bare `node test/run.mjs` has none). */
function nodeGyp(): Record<string, string> {
  const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  const js = join(dirname(realpathSync(npm)), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  assert.ok(existsSync(js), `npm's node-gyp not found at ${js}`);
  return { npm_config_node_gyp: js };
}

/** A copy of what the native build reads, without any build output. */
function nativeCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'g-native-'));
  for (const p of ['binding.gyp', 'native', 'scripts/build-native.mjs']) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
  mkdirSync(join(dir, 'shims'));
  for (const f of spawnSync('git', ['-C', ROOT, 'ls-files', 'shims'], { encoding: 'utf8' }).stdout.trim().split('\n'))
    cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  return dir;
}

function build(dir: string, env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, [join(dir, 'scripts', 'build-native.mjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: env as NodeJS.ProcessEnv,
    timeout: 300_000,
  });
}

test("a warning in the addon under GATE_WERROR=1 stops the build with the compiler's message and what to install; nothing is left", {
  timeout: 300_000,
}, () => {
  const dir = nativeCopy();
  try {
    // the shims' build is not what this is about (the next case is): under GATE_WERROR it would rebuild them
    // all (make -B), most of this case's time, so the copy's Makefile builds nothing
    writeFileSync(join(dir, 'shims', 'Makefile'), 'all:\n\t@true\nclean:\n\t@true\n.PHONY: all clean\n');
    const c = join(dir, 'native', 'gate_native.c');
    writeFileSync(c, readFileSync(c, 'utf8') + '\nstatic int gate_unused_probe(void) { int probe_unused_var; return 0; }\n');
    const r = build(dir, { ...process.env, GATE_WERROR: '1', ...nodeGyp() });
    assert.equal(r.status, 1);
    assert.match(r.stdout + r.stderr, /unused variable .probe_unused_var./);
    assert.match(r.stderr, /gate-sh: building the native addon failed/);
    assert.ok(r.stderr.includes(HINT), r.stderr);
    for (const p of ['shims/libgate.so', 'shims/gate-shell', 'build']) assert.ok(!existsSync(join(dir, p)), `${p} left behind`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a compile error in the shims stops the build with the compiler's message; no shim is left", { timeout: 120_000 }, () => {
  const dir = nativeCopy();
  try {
    writeFileSync(join(dir, 'shims', 'gate-shell.c'), 'int main(void) { return not_declared_anywhere; }\n');
    const r = build(dir, { ...process.env });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not_declared_anywhere/);
    assert.match(r.stderr, /gate-sh: building the exec-time shims failed/);
    assert.ok(r.stderr.includes(HINT), r.stderr);
    for (const p of ['shims/libgate.so', 'shims/gate-shell', 'build']) assert.ok(!existsSync(join(dir, p)), `${p} left behind`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no C toolchain on PATH: the build says which tools are missing and how to install them, and builds nothing', () => {
  const dir = nativeCopy();
  try {
    // a PATH with node and sh only
    const bin = join(dir, 'path');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync(spawnSync('sh', ['-c', 'command -v sh'], { encoding: 'utf8' }).stdout.trim(), join(bin, 'sh'));
    const r = build(dir, { ...process.env, PATH: bin });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /make, gcc, python3 not found on PATH/);
    assert.ok(r.stderr.includes(HINT), r.stderr);
    assert.ok(!existsSync(join(dir, 'shims', 'libgate.so')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
