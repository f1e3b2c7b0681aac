/**
 * What stays read-only or invisible inside writable roots (Codex §4.6/§7, hardened). Pure: the filesystem is
 * seen through the injected FsView.
 *
 * Protected names (PROTECTED_NAMES plus the user's GATE_PROTECTED_NAMES): read-only in every writable root
 * when present. A missing one gets no placeholder: a mount needs a mount point, which bubblewrap would make
 * on the host (a trace in the user's folder, and visible to the run: `ls -la` would differ from bash's), and
 * Linux cannot forbid one name in a folder the sandbox may write without one. Instead the daemon notes what
 * is missing when a run starts (missingProtected) and moves aside what a run made there when it ends
 * (src/daemon/planted.ts). Trust boundary: what agents, editors and git read from these outside the sandbox
 * would run code there.
 *
 * `.git` is protected by parts, so that git's own writes (objects, refs, index, logs, stash, worktrees) work
 * in the sandbox: the git folder is pinned (bound onto itself, so it cannot be renamed or replaced) and what
 * makes git run code is read-only — `config`, `config.worktree`, `hooks/` (blocked when missing), `commondir`,
 * the same in every submodule's (`modules/`) and linked worktree's folder, and a `.git` file (`gitdir:`).
 * Nested repositories in the workspace are found in its direct sub-folders and from `.gitmodules`. A
 * missing `.git` in the workspace may be made (`git init` works, as in Codex): an escalated git never uses a repository changed
 * since the daemon started (src/daemon/git-trust.ts). Above the workspace, where it lies inside another
 * writable root (/tmp), a `.git` is protected where present and watched where missing: git's discovery climbs
 * from a folder without a repository into its parents.
 *
 * Linux cannot mount on a symlink (a mount follows it), so for a protected entry that IS a symlink we
 * protect its target; the link itself can still be removed or re-pointed from inside (documented).
 */
import { posix } from 'node:path';
import type { FsView } from './fs-view.js';
import { SandboxError } from './errors.js';
import { hostWritable, isWithin, normAbs, type MountOp } from './mounts.js';

/** Agents' and editors' configuration that runs code or grants permissions outside the sandbox. */
export const PROTECTED_NAMES: readonly string[] = ['.git', '.codex', '.agents', '.claude', '.gemini', '.vscode', '.idea', '.mcp.json'];
/** The parts of a git folder that make git run code (read-only), shown by `gate explain`. */
export const GIT_CODE_PARTS: readonly string[] = ['config', 'config.worktree', 'hooks', 'commondir'];

/** The protected names for this environment: the built-in list plus GATE_PROTECTED_NAMES (`:`-separated
 *  names, never paths): a user can add to the list, never take away from it. */
export function protectedNames(env: Readonly<Record<string, string | undefined>> = {}): string[] {
  const extra = (env.GATE_PROTECTED_NAMES ?? '').split(':').filter((n) => n !== '' && n !== '.' && n !== '..' && !n.includes('/'));
  return [...new Set([...PROTECTED_NAMES, ...extra])];
}

/** The list as `gate explain` shows it (paths relative to a writable root). */
export function protectedList(env: Readonly<Record<string, string | undefined>> = {}): string[] {
  return protectedNames(env).flatMap((n) => (n === '.git' ? GIT_CODE_PARTS.map((p) => `.git/${p}`).concat('.git/modules/*/…', '.git/worktrees/*/…') : [n]));
}

export interface ProtectOptions {
  /** the mounts so far: a git folder is pinned read-write only where the sandbox could write it anyway */
  before?: readonly MountOp[];
  /** the protected names (protectedNames(env)); default the built-in list */
  names?: readonly string[];
  /** look for nested repositories below the root (the workspace and declared writable roots, not /tmp) */
  nested?: boolean;
}

/** Read-only mounts for the protected entries of one writable root (a realpath). */
export function protectRoot(root: string, fs: FsView, opts: ProtectOptions): MountOp[] {
  const ops: MountOp[] = [];
  const all = (): MountOp[] => [...(opts.before ?? []), ...ops];
  for (const name of opts.names ?? PROTECTED_NAMES) {
    const p = posix.join(root, name);
    const kind = fs.kind(p);
    // a symlink without a target is refused; an entry removed since its kind was asked is a missing one
    const real = kind === null ? null : fs.realpath(p);
    if (real === null && kind === 'symlink') throw new SandboxError(`cannot protect ${p}: it is a dangling symlink`);
    if (real === null) continue; // watched instead (missingProtected)
    if (name === '.git') ops.push(...protectGit(real, fs, all()));
    else ops.push({ op: 'ro-bind', src: real, dest: real });
  }
  if (opts.nested) for (const g of nestedGits(root, fs)) ops.push(...protectGit(g, fs, all()));
  return ops;
}

/** A `.git` (folder, or file naming the folder) at its real path. */
function protectGit(real: string, fs: FsView, before: readonly MountOp[]): MountOp[] {
  if (fs.kind(real) !== 'file') return repository(real, fs, before);
  // a `.git` file (worktree, submodule) points at the real git folder: `gitdir: <path>`; the file itself is
  // read-only (re-pointed, it would hand the user's git a folder the sandbox made)
  const ops: MountOp[] = [{ op: 'ro-bind', src: real, dest: real }];
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readText(real) ?? '');
  const dir = m ? fs.realpath(posix.resolve(posix.dirname(real), m[1])) : null;
  if (dir !== null && fs.kind(dir) === 'dir') ops.push(...repository(dir, fs, [...before, ...ops]));
  return ops;
}

/** A git folder by parts; one that is no repository yet (no HEAD: an empty folder) read-only as a whole, as
 *  filled it would be one. */
function repository(dir: string, fs: FsView, before: readonly MountOp[]): MountOp[] {
  return fs.kind(posix.join(dir, 'HEAD')) === null ? [{ op: 'ro-bind', src: dir, dest: dir }] : gitFolder(dir, fs, before, 0);
}

/**
 * One git folder: pinned where writable, its code-running parts read-only, a missing `hooks/` blocked; then
 * its common folder (a linked worktree's `commondir`), its submodules' folders and linked worktrees' folders.
 */
function gitFolder(dir: string, fs: FsView, before: readonly MountOp[], depth: number): MountOp[] {
  if (depth > 4 || !hostWritable(before, dir)) return []; // read-only already: nothing in it can change
  const ops: MountOp[] = [{ op: 'bind', src: dir, dest: dir }];
  for (const part of GIT_CODE_PARTS) {
    const p = posix.join(dir, part);
    const real = fs.kind(p) === null ? null : fs.realpath(p);
    if (real !== null) ops.push({ op: 'ro-bind', src: real, dest: real });
    else if (fs.kind(p) === 'symlink') throw new SandboxError(`cannot protect ${p}: it is a dangling symlink`);
    else if (part === 'hooks' && !isWorktreeFolder(dir)) ops.push({ op: 'empty-ro', dest: p });
  }
  const common = fs.readText(posix.join(dir, 'commondir'))?.trim();
  const commonReal = common ? fs.realpath(posix.resolve(dir, common)) : null;
  if (commonReal !== null && commonReal !== dir && !isWithin(dir, commonReal)) ops.push(...gitFolder(commonReal, fs, [...before, ...ops], depth + 1));
  for (const sub of ['modules', 'worktrees']) {
    for (const name of (fs.folders(posix.join(dir, sub)) ?? []).sort()) ops.push(...gitFolder(posix.join(dir, sub, name), fs, [...before, ...ops], depth + 1));
  }
  return ops;
}

/** `<git>/worktrees/<name>`: its hooks are its common folder's, so a missing `hooks/` there means nothing. */
const isWorktreeFolder = (dir: string) => posix.basename(posix.dirname(dir)) === 'worktrees';

/** Never looked into: dependency trees and caches, which hold no repositories of the user's. */
const SKIP = new Set(['node_modules', '.git', '.venv', 'venv', '__pycache__', 'target', 'dist', 'build']);

/**
 * The real paths of nested `.git` entries below `root` (not its own): in its direct sub-folders, and every
 * submodule `.gitmodules` names (at any depth). No deeper walk: it runs on every sandbox build (the session
 * sandbox's key is its mounts), where one folder listing costs what the rest of the build does. A deeper
 * repository made by the user is not protected (documented); an escalated git never uses one a sandboxed
 * run changed (src/daemon/git-trust.ts).
 */
export function nestedGits(root: string, fs: FsView): string[] {
  const found: string[] = [];
  const at = (dir: string): void => {
    const git = posix.join(dir, '.git');
    const kind = fs.kind(git);
    const real = kind === null || kind === 'symlink' ? null : fs.realpath(git);
    if (real !== null && !found.includes(real)) found.push(real);
  };
  // symlinks are not followed (folders() leaves them out): their targets are not in this root
  for (const name of (fs.folders(root) ?? []).sort()) if (!SKIP.has(name)) at(posix.join(root, name));
  for (const m of (fs.readText(posix.join(root, '.gitmodules')) ?? '').matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)) {
    const dir = posix.resolve(root, m[1]);
    if (isWithin(dir, root) && dir !== root && !m[1].split('/').includes('..')) at(dir);
  }
  return found;
}

/**
 * `.git` in the writable folders above the workspace (the cwd) up to the top of the writable root that holds
 * it, protected like any other: git's discovery climbs from a folder without a repository into its parents.
 */
export function protectAncestors(cwd: string, roots: readonly string[], fs: FsView, before: readonly MountOp[]): MountOp[] {
  const ops: MountOp[] = [];
  for (const d of writableAncestors(cwd, roots)) {
    const git = posix.join(d, '.git');
    const kind = fs.kind(git);
    const real = kind === null ? null : fs.realpath(git);
    if (real !== null) ops.push(...protectGit(real, fs, [...before, ...ops]));
    else if (kind === 'symlink') throw new SandboxError(`cannot protect ${git}: it is a dangling symlink`);
  }
  return ops;
}

/** The writable folders above `cwd`, inside the outermost writable root that holds it (nearest first). */
function writableAncestors(cwd: string, roots: readonly string[]): string[] {
  const outer = roots.filter((r) => r !== cwd && isWithin(cwd, r)).sort((a, b) => a.length - b.length)[0];
  const out: string[] = [];
  if (outer === undefined) return out;
  for (let d = posix.dirname(cwd); isWithin(d, outer); d = posix.dirname(d)) {
    out.push(d);
    if (d === outer || d === '/') break;
  }
  return out;
}

/**
 * The protected paths a run in `cwd` could make that are missing now: every protected name but `.git` in the
 * workspace (a `git init` there is the agent's to make), and `.git` in each writable folder above it. The
 * daemon moves aside whatever of these a run made (src/daemon/planted.ts). `cwd` and `roots` are real paths.
 */
export function missingProtected(cwd: string, roots: readonly string[], fs: FsView, names: readonly string[] = PROTECTED_NAMES): string[] {
  const candidates = [...names.filter((n) => n !== '.git').map((n) => posix.join(cwd, n)), ...writableAncestors(cwd, roots).map((d) => posix.join(d, '.git'))];
  return candidates.filter((p) => fs.kind(p) === null);
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
