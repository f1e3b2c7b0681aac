/**
 * The SandboxContext for gate-sh's own layout: GATE_HOME (rules, config, audit log), CODEX_HOME (Codex
 * rules, skills) and what of gate-sh's installation runs read-only (their rules, config and audit log even under a profile's declared write path); the whole runtime folder hidden — every session's approval socket, and other
 * sessions' request sockets — with only this session's request folder bound back at the same path, read-only
 * but for the run's own client folder (the daemon's sockets and other runs' reply sockets cannot be unlinked or
 * replaced from inside); the user's
 * credential locations hidden (src/sandbox/secrets.ts). Not pure: reads the kernel's socket list, the
 * password database, and makes the empty placeholder file in the runtime folder (each when a builder first
 * asks for what it gives).
 */
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codexHome, type Env, gatePaths, type GatePaths } from '../paths/index.js';
import { nodeFs, type FsView } from './fs-view.js';
import type { SandboxContext } from './bwrap-argv.js';
import { parseProcNetUnix, socketFolders } from './sockets.js';
import { secretLocations, type SecretsSetting } from './secrets.js';

/** gate-sh's installation (dist/src/sandbox/ → ../../..): libgate.so and the shims must load inside. */
export const GATE_INSTALL_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** What of the installation runs outside the sandbox (the daemon, gate-sh, the shims, the native addon and
 * the libraries they load): read-only inside, also when the installation lies inside a writable root (a
 * checkout under /tmp or in the workspace), so a sandboxed script cannot rewrite what the next run executes. */
export const GATE_INSTALL_RUNS = ['bin', 'dist', 'shims', 'native', 'build', 'node_modules', 'package.json'].map((p) => join(GATE_INSTALL_ROOT, p));

export interface GateContextOptions {
  cwd: string;
  env: Env;
  fs?: FsView;
  newSession?: boolean;
  /** more of gate-sh's files to keep read-only always (rule files and an audit log named in the config) */
  protectedExtra?: readonly string[];
  /** the host's path sockets; default: the kernel's list now (hostSockets below) */
  hostSockets?: readonly string[];
  /** the daemon's [secrets] setting (the pre-flight reply's `secrets`); the default list applies without it */
  secrets?: SecretsSetting;
  /** gatePaths(env), when the caller worked them out for the same build already (each asks the filesystem) */
  paths?: GatePaths;
  /** the run's own client folder (src/paths/paths.ts runClientDir): the only one its sandbox sees and
   *  writes; absent: none (its clients cannot bind a reply socket: fail closed) */
  clientDir?: string;
}

/** The user's home folders: $HOME as the run gets it, and the password database's (a run reading
 * /home/<user>/.ssh by its absolute path, with HOME set elsewhere, finds it hidden too). */
export function userHomes(env: Env): string[] {
  const homes = env.HOME?.startsWith('/') ? [env.HOME] : [];
  try {
    homes.push(userInfo().homedir);
  } catch {
    /* no password entry: $HOME alone */
  }
  return homes;
}

/**
 * gate-sh's empty read-only file bound over hidden secret files, in the runtime folder (which no sandbox
 * sees, so nothing inside can write it): made when missing, or made again when something of the user's wrote
 * into it (a mask must read as empty). Null when it cannot be had: hidden files then get /dev/null (unreadable).
 */
export function secretPlaceholder(runtime: string): string | null {
  const p = join(runtime, 'empty');
  try {
    const st = lstatSync(p);
    if (st.isFile() && st.size === 0 && st.uid === process.getuid?.()) return p;
  } catch {
    /* made below */
  }
  try {
    mkdirSync(runtime, { recursive: true, mode: 0o700 });
    const tmp = `${p}.${process.pid}`;
    writeFileSync(tmp, '', { mode: 0o444 });
    renameSync(tmp, p); // atomic: a concurrent run sees the old file or the new one, both empty
    return p;
  } catch {
    return null;
  }
}

/** The path sockets bound in this network namespace (the host's: gate-sh and the daemon run outside any
 * sandbox), from the kernel's list; none when it cannot be read (the socket folders are still hidden). */
export function hostSockets(): string[] {
  try {
    return parseProcNetUnix(readFileSync('/proc/net/unix', 'utf8'));
  } catch {
    return [];
  }
}

/** f's value, worked out at the first call and kept (one context: one build). */
function once<T>(f: () => T): () => T {
  let done = false;
  let v: T;
  return () => {
    if (!done) {
      v = f();
      done = true;
    }
    return v;
  };
}

/**
 * The host's socket list, the secret locations and the placeholder file are read when a builder first asks
 * for them, then kept: a run without a sandbox (danger-full-access, an Unsandboxed escalation) needs only
 * the guard's paths, and read the kernel's socket list, the password database and `~/.npmrc` for nothing at
 * every pre-flight. A sandbox's builders ask for each, and get what the eager reading gave.
 */
export function gateSandboxContext(o: GateContextOptions): SandboxContext {
  const paths = o.paths ?? gatePaths(o.env);
  const listed = once(() => o.hostSockets ?? hostSockets());
  const secrets = once(() => secretLocations({ homes: userHomes(o.env), env: o.env, setting: o.secrets, fs: o.fs ?? nodeFs }));
  const secretFile = once(() => secretPlaceholder(paths.runtime) ?? undefined);
  return {
    cwd: o.cwd,
    env: o.env,
    runtimeRequestDir: paths.requestDir,
    runtimeClientDir: o.clientDir,
    hiddenPaths: [paths.runtime],
    protectedExtra: [paths.home, codexHome(o.env), ...GATE_INSTALL_RUNS],
    gateHomes: [paths.home, codexHome(o.env)],
    critical: [
      { path: paths.rulesDir },
      { path: join(codexHome(o.env), 'rules') },
      { path: paths.configFile, file: true },
      { path: paths.auditLog, file: true },
      ...(o.protectedExtra ?? []).map((p) => ({ path: p, file: true })),
    ],
    alwaysReadable: [GATE_INSTALL_ROOT],
    hostSockets: {
      folders: socketFolders(process.getuid?.() ?? 0, o.env, [paths.runtime]),
      get listed() {
        return listed();
      },
    },
    fs: o.fs,
    newSession: o.newSession,
    get secrets() {
      return secrets();
    },
    get secretFile() {
      return secretFile();
    },
  };
}
