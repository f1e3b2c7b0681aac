/**
 * bubblewrap mount operations as data, and the order they must be given in. bwrap applies options left to
 * right and a later mount hides what an earlier one put under it (`--tmpfs /tmp` after
 * `--bind /tmp/ws` hides the workspace), so every builder emits: base, /tmp, writable binds, read-only
 * protections, hidden paths, the request folder.
 */
import { posix } from 'node:path';
import { SOCKET_MASK } from '../protocol/index.js';

export type MountOp =
  | { op: 'ro-bind'; src: string; dest: string }
  | { op: 'bind'; src: string; dest: string }
  | { op: 'tmpfs'; dest: string }
  | { op: 'dev'; dest: string }
  | { op: 'proc'; dest: string }
  /** an empty read-only folder: hides what is there and blocks creating anything at that path */
  | { op: 'empty-ro'; dest: string }
  /** a host socket's mask (/dev/null over it, src/sandbox/sockets.ts): the launcher mounts it in the built
   *  sandbox, not bubblewrap, and skips it when the socket is gone by then (shims/gate-masks.h) */
  | { op: 'socket-mask'; dest: string }
  | { op: 'symlink'; target: string; dest: string };

/**
 * The `--remount-ro` of every empty read-only folder comes last, so that mount points for later binds
 * (the request folder inside the hidden runtime folder) can still be created in it first. bwrap's
 * `--remount-ro` is not recursive: binds below stay as they are.
 */
export function mountArgs(ops: readonly MountOp[]): string[] {
  const out: string[] = [];
  const remount: string[] = [];
  for (const m of ops) {
    switch (m.op) {
      case 'ro-bind':
      case 'bind':
        out.push(`--${m.op}`, m.src, m.dest);
        break;
      case 'tmpfs':
      case 'dev':
      case 'proc':
        out.push(`--${m.op}`, m.dest);
        break;
      case 'empty-ro':
        out.push('--tmpfs', m.dest);
        remount.push('--remount-ro', m.dest);
        break;
      case 'socket-mask':
        out.push(SOCKET_MASK.option, SOCKET_MASK.source, m.dest);
        break;
      case 'symlink':
        out.push('--symlink', m.target, m.dest);
        break;
    }
  }
  return [...out, ...remount];
}

/** `p` is `root` or lies below it (both absolute and normalised). */
export function isWithin(p: string, root: string): boolean {
  return p === root || root === '/' || p.startsWith(root.endsWith('/') ? root : root + '/');
}

/** Parents before children, duplicates dropped: a parent bound later would hide a child's mount. */
export function sortRoots(roots: readonly string[]): string[] {
  return [...new Set(roots)].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

const depth = (p: string) => (p === '/' ? 0 : p.split('/').length - 1);

/** Lexically normalised absolute path without a trailing slash. */
export function normAbs(p: string): string {
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

/**
 * Would creating `p` inside the sandbox write to the host? True when the mount covering `p` (the op with
 * the longest destination prefix; the later one on a tie) is a read-write bind. A path under a tmpfs or a
 * read-only mount cannot be created there, or only in memory.
 */
export function hostWritable(ops: readonly MountOp[], p: string): boolean {
  return covering(ops, p)?.op === 'bind';
}

/** The op whose mount covers `p` (the longest destination prefix, the later on a tie), or null. */
function covering(ops: readonly MountOp[], p: string): MountOp | null {
  let best: MountOp | null = null;
  for (const m of ops) if (m.op !== 'symlink' && isWithin(p, m.dest) && (best === null || m.dest.length >= best.dest.length)) best = m;
  return best;
}

/** Whether `p` is seen from inside as the host's, given the mounts before it: under a bind (not a tmpfs, an
 * empty folder, /dev/null, or nothing at all). */
export function seenFromHost(ops: readonly MountOp[], p: string): boolean {
  const c = covering(ops, p);
  return c !== null && (c.op === 'bind' || c.op === 'ro-bind') && c.src !== '/dev/null';
}
