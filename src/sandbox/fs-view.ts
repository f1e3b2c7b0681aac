/**
 * The little of the filesystem the argv builders need to look at, injected so they stay pure:
 * tests pass plain data (`fakeFs`), production passes `nodeFs` (the only I/O here).
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';

export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface FsView {
  /** What is at this path, without following a final symlink; null when nothing is there. */
  kind(path: string): EntryKind | null;
  /** Canonical path with every symlink resolved; null when it does not resolve. */
  realpath(path: string): string | null;
  /** A small text file's contents (a `.git` file); null when unreadable. */
  readText(path: string): string | null;
  /** A symlink's target as written; null when the path is not a symlink. */
  readlink(path: string): string | null;
  /** The names of a folder's sub-folders (not symlinks; unsorted); null when it is not a readable folder. One
   *  getdents per folder, no stat per entry: looking for nested repositories on every sandbox build. */
  folders(path: string): string[] | null;
}

export const nodeFs: FsView = {
  kind(p) {
    try {
      // most paths asked about are missing (secret locations, sockets, protected names): no exception for
      // those, a third of the time of a thrown ENOENT
      const s = lstatSync(p, { throwIfNoEntry: false });
      if (s === undefined) return null;
      return s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
    } catch {
      return null;
    }
  },
  realpath(p) {
    try {
      // one realpath(3) call: the JS realpathSync lstats every component of every path, which was about a
      // third of a workspace-write pre-flight's daemon time (docs/startup.md)
      return realpathSync.native(p);
    } catch {
      return null;
    }
  },
  readText(p) {
    try {
      return readFileSync(p, 'utf8').slice(0, 4096);
    } catch {
      return null;
    }
  },
  readlink(p) {
    try {
      return readlinkSync(p);
    } catch {
      return null;
    }
  },
  folders(p) {
    try {
      return readdirSync(p, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      return null;
    }
  },
};

/**
 * The same view, each answer kept for the wrapper's life (one argv build): the builders ask about the same
 * paths several times (the gate's own folders by protectExtra and gateMounts, /tmp, each root's entries),
 * 52 lookups of 34 paths for a workspace-write turn, each a system call. A path's kind and real path are
 * kept apart, so the two are made to agree when the path appeared between the questions (below).
 */
export function memoFs(fs: FsView): FsView {
  const kinds = new Map<string, EntryKind | null>();
  const reals = new Map<string, string | null>();
  const texts = new Map<string, string | null>();
  const links = new Map<string, string | null>();
  const folders = new Map<string, string[] | null>();
  const memo = <T>(m: Map<string, T>, f: (p: string) => T) => (p: string): T => {
    if (m.has(p)) return m.get(p) as T;
    const v = f(p);
    m.set(p, v);
    return v;
  };
  // A path that appears during the build (another run made CODEX_HOME) may be missing for one question and
  // there for the next: an answer that it exists drops a kept answer that it does not, so a folder is never
  // taken for a dangling symlink (it exists, yet has no real path).
  return {
    kind: memo(kinds, (p) => {
      const k = fs.kind(p);
      if (k !== null && k !== 'symlink' && reals.get(p) === null) reals.delete(p);
      return k;
    }),
    realpath: memo(reals, (p) => {
      const r = fs.realpath(p);
      if (r !== null && kinds.get(p) === null) kinds.delete(p);
      return r;
    }),
    readText: memo(texts, (p) => fs.readText(p)),
    readlink: memo(links, (p) => fs.readlink(p)),
    folders: memo(folders, (p) => fs.folders(p)),
  };
}

/**
 * A filesystem made of plain data: `{ '/w': 'dir', '/w/.git': 'file', '/w/l': '->/x' }` (a `->` value is a
 * symlink, an object `{text}` a file with contents). Parents are implied.
 */
export function fakeFs(entries: Record<string, 'dir' | 'file' | string | { text: string }>): FsView {
  const at = (p: string) => entries[p];
  const resolve = (p: string, depth = 0): string | null => {
    if (depth > 32) return null;
    const parts = posix.normalize(p).split('/').filter(Boolean);
    let cur = '/';
    for (let i = 0; i < parts.length; i++) {
      const next = posix.join(cur, parts[i]);
      const e = at(next);
      if (typeof e === 'string' && e.startsWith('->')) {
        const target = posix.resolve(cur, e.slice(2));
        const r = resolve(posix.join(target, ...parts.slice(i + 1)), depth + 1);
        return r;
      }
      if (e === undefined && !Object.keys(entries).some((k) => k.startsWith(next + '/'))) return null;
      cur = next;
    }
    return cur;
  };
  return {
    kind(p) {
      const e = at(p);
      if (e === undefined) return Object.keys(entries).some((k) => k.startsWith(p.replace(/\/$/, '') + '/')) ? 'dir' : null;
      if (typeof e === 'object') return 'file';
      if (e.startsWith('->')) return 'symlink';
      return e === 'dir' ? 'dir' : 'file';
    },
    realpath: (p) => resolve(p),
    readText(p) {
      const e = at(p);
      return e && typeof e === 'object' ? e.text : null;
    },
    readlink(p) {
      const e = at(p);
      return typeof e === 'string' && e.startsWith('->') ? e.slice(2) : null;
    },
    folders(p) {
      const real = resolve(p);
      if (real === null || this.kind(real) !== 'dir') return null;
      const prefix = real === '/' ? '/' : real + '/';
      const names = new Set<string>();
      for (const k of Object.keys(entries)) if (k.startsWith(prefix)) names.add(k.slice(prefix.length).split('/')[0]);
      return [...names].filter((n) => this.kind(prefix + n) === 'dir');
    },
  };
}
