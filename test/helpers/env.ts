/** Isolated homes for tests: each test gets its own GATE_HOME, CODEX_HOME and runtime folder. */
import { accessSync, constants, existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (tests run from dist/test/...). */
export const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
/** The Node gate-sh (the native entry point hands everything it does not do itself to it). */
export const GATE_SH_NODE = join(ROOT, 'bin', 'gate-sh-node');
/** gate-sh as installed: the native entry point (shims/gate-sh-native.c); GATE_SH_ENTRY=node runs the same
 * tests against the Node gate-sh. */
export const GATE_SH = process.env.GATE_SH_ENTRY === 'node' ? GATE_SH_NODE : join(ROOT, 'bin', 'gate-sh');
export const GATE = join(ROOT, 'bin', 'gate');
export const VECTORS_PATH = join(ROOT, 'test', 'fixtures', 'codex-vectors.json');

export interface TempEnv {
  dir: string;
  env: Record<string, string>;
  cleanup(): void;
}

/** The environment a user's shell would have: `npm test` adds its lifecycle variables (npm_config_cache
 * names the real ~/.npm, which a sandbox keeps read-only), so they are left out. */
function callerEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^npm_/i.test(e[0])));
}

/**
 * Where a test's runtime folder goes: under /run/user/<uid>, as systemd lays it out for a user, when that
 * folder is there or can be made (root). Every sandbox hides that folder whole (src/sandbox/sockets.ts), so
 * the daemons other test files start and stop side by side never show up in this file's sandboxes as
 * sockets to mask one by one, which may vanish while a sandbox is built. Elsewhere: inside the test's folder.
 */
function userRuntimeRoot(): string | null {
  const uid = process.getuid?.() ?? -1;
  const root = `/run/user/${uid}`;
  try {
    if (!existsSync(root)) mkdirSync(root, { mode: 0o700 });
    accessSync(root, constants.W_OK);
    return root;
  } catch {
    return null;
  }
}

/** A fresh environment: short paths (sun_path is 107 bytes), no autostart surprises unless asked. */
export function tempEnv(extra: Record<string, string> = {}, o: { runtimeInside?: boolean } = {}): TempEnv {
  const dir = mkdtempSync(join(tmpdir(), 'g-'));
  // runtimeInside: a test that confines the daemon's whole world to `dir` (an outer sandbox around it)
  const runRoot = o.runtimeInside ? null : userRuntimeRoot();
  const runtime = runRoot ? join(runRoot, basename(dir)) : join(dir, 'r');
  const home = join(dir, 'h');
  mkdirSync(home);
  const env: Record<string, string> = {
    ...callerEnv(),
    HOME: home,
    GATE_HOME: join(dir, 'gh'),
    CODEX_HOME: join(dir, 'ch'),
    XDG_RUNTIME_DIR: runtime,
    // a test's daemon (started or autostarted) decides one warm-up script at its start, none once idle: a
    // daemon living past 10 s would spend ~1.5 s of CPU warming parsers for clients that never come, and
    // the suite is CPU-bound (test/daemon/warm-up.test.ts tests the warm-up itself)
    GATE_WARM_UP: '1',
    ...extra,
  };
  mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
  const cleanup = () => {
    rmSync(dir, { recursive: true, force: true });
    if (runtime !== join(dir, 'r')) rmSync(runtime, { recursive: true, force: true });
  };
  return { dir, env, cleanup };
}
