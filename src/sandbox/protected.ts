/**
 * What stays read-only or invisible inside writable roots (Codex §4.6/§7, hardened):
 * `.git` (and a `gitdir:` target), `.codex`, `.agents`, `.claude` in each writable root; gate-sh's own folders
 * (rules, config, audit log: GATE_HOME; Codex rules: CODEX_HOME) read-only; the approval folder hidden.
 *
 * Linux cannot mount on a symlink (a mount follows it), so for a protected entry that IS a symlink we
 * protect its target; the link itself can still be removed or re-pointed from inside (documented).
 * A protected path that does not exist yet, where the sandbox could create it, gets an empty read-only
 * folder as mount point; bubblewrap creates that mount point on the host, where it stays (an empty folder).
 */
import { posix } from 'node:path';
import type { FsView } from './fs-view.js';
import { SandboxError } from './errors.js';
import { hostWritable, normAbs, type MountOp } from './mounts.js';

/** Read-only in every writable root when present (`.claude`: Claude Code's settings grant permissions). */
export const PROTECTED_NAMES = ['.git', '.codex', '.agents', '.claude'] as const;
/** Also made uncreatable in the workspace root when missing: a planted `.git` (hooks, fsmonitor) or
 *  `.codex` (rules, config) would run code outside the sandbox later. */
export const PROTECTED_WHEN_MISSING: ReadonlySet<string> = new Set(['.git', '.codex']);

export interface ProtectOptions {
  /** also block creating missing protected entries (used for the workspace root, the cwd) */
  missingToo: boolean;
}

/** Read-only mounts for the protected entries of one writable root (a realpath). */
export function protectRoot(root: string, fs: FsView, opts: ProtectOptions): MountOp[] {
  const ops: MountOp[] = [];
  for (const name of PROTECTED_NAMES) {
    const p = posix.join(root, name);
    const kind = fs.kind(p);
    // a symlink without a target is refused; an entry removed since its kind was asked is a missing one
    const real = kind === null ? null : fs.realpath(p);
    if (real === null && kind === 'symlink') throw new SandboxError(`cannot protect ${p}: it is a dangling symlink`);
    if (real === null) {
      if (opts.missingToo && PROTECTED_WHEN_MISSING.has(name)) ops.push({ op: 'empty-ro', dest: p });
      continue;
    }
    ops.push({ op: 'ro-bind', src: real, dest: real });
    if (name === '.git' && fs.kind(real) === 'file') ops.push(...gitdirTarget(real, fs));
  }
  return ops;
}

/** A `.git` file (worktree, submodule) points at the real git folder: `gitdir: <path>`. */
function gitdirTarget(gitFile: string, fs: FsView): MountOp[] {
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readText(gitFile) ?? '');
  if (!m) return [];
  const real = fs.realpath(posix.resolve(posix.dirname(gitFile), m[1]));
  return real ? [{ op: 'ro-bind', src: real, dest: real }] : [];
}

/**
 * The path's nearest existing ancestor (resolved) and the first missing component below it; null when the
 * path itself exists after all (another run made it since it was found missing).
 */
export function firstMissing(path: string, fs: FsView): string | null {
  const parts = normAbs(path).split('/').filter(Boolean);
  let i = parts.length;
  while (i > 0 && fs.kind('/' + parts.slice(0, i).join('/')) === null) i--;
  if (i === parts.length) return null;
  const existing = '/' + parts.slice(0, i).join('/');
  const real = fs.realpath(existing);
  if (real === null) throw new SandboxError(`cannot protect ${path}: ${existing} is a dangling symlink`);
  return posix.join(real, parts[i]);
}

/**
 * gate-sh's and Codex's own folders and files: read-only; if missing, uncreatable wherever the sandbox
 * could write (an empty read-only folder, or for a missing file an empty read-only file: an empty
 * config or log is harmless where a folder would break its reader).
 */
export function protectExtra(path: string, before: readonly MountOp[], fs: FsView, isFile = false): MountOp[] {
  const real = fs.realpath(path);
  if (real !== null) return [{ op: 'ro-bind', src: real, dest: real }];
  if (fs.kind(path) === 'symlink') throw new SandboxError(`cannot protect ${path}: it is a dangling symlink`);
  const first = firstMissing(path, fs);
  if (first === null) {
    const now = appeared(path, fs, 'protect');
    return [{ op: 'ro-bind', src: now, dest: now }];
  }
  if (!hostWritable(before, first)) return [];
  return isFile && first === path ? [{ op: 'ro-bind', src: '/dev/null', dest: first }] : [{ op: 'empty-ro', dest: first }];
}

/** The real path of a path found missing that exists now (the memo asks again once it is seen to exist). */
function appeared(path: string, fs: FsView, verb: string): string {
  const real = fs.realpath(path);
  if (real === null) throw new SandboxError(`cannot ${verb} ${path}: it appeared while the sandbox was built, and its real path cannot be told`);
  return real;
}

/** Paths that must not be visible inside at all (the approval folder): an empty read-only folder on top. */
export function hidePath(path: string, before: readonly MountOp[], fs: FsView): MountOp[] {
  const real = fs.realpath(path);
  if (real !== null) {
    if (fs.kind(real) !== 'dir') throw new SandboxError(`cannot hide ${path}: not a folder`);
    return [{ op: 'empty-ro', dest: real }];
  }
  const first = firstMissing(path, fs);
  if (first === null) return hidePath(appeared(path, fs, 'hide'), before, fs);
  if (hostWritable(before, first)) return [{ op: 'empty-ro', dest: first }];
  throw new SandboxError(`cannot hide ${path} from the sandbox: it does not exist yet (create it before running)`);
}
