/**
 * The SandboxContext for gate-sh's own layout: GATE_HOME (rules, config, audit log), CODEX_HOME (Codex
 * rules, skills) and what of gate-sh's installation runs read-only (their rules, config and audit log even under a profile's declared write path); the whole runtime folder hidden — every session's approval socket, and other
 * sessions' request sockets — with only this session's request folder bound back at the same path, read-only
 * but for its clients' folder (the daemon's sockets cannot be unlinked or replaced from inside).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codexHome, gatePaths, type Env } from '../protocol/paths.js';
import type { FsView } from './fs-view.js';
import type { SandboxContext } from './bwrap-argv.js';
import { parseProcNetUnix, socketFolders } from './sockets.js';

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

export function gateSandboxContext(o: GateContextOptions): SandboxContext {
  const paths = gatePaths(o.env);
  return {
    cwd: o.cwd,
    env: o.env,
    runtimeRequestDir: paths.requestDir,
    runtimeClientDir: paths.clientDir,
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
    hostSockets: { folders: socketFolders(process.getuid?.() ?? 0, o.env, [paths.runtime]), listed: o.hostSockets ?? hostSockets() },
    fs: o.fs,
    newSession: o.newSession,
  };
}
