/**
 * Whether an escalated git may leave the sandbox: never when the configuration it
 * would read could have been written by a sandboxed run of this session. git runs programs named in its
 * configuration (core.fsmonitor, hooks, filter and diff drivers, core.sshCommand, aliases...), so an allowed
 * `git status` run outside with a repository's config, hooks or `commondir` that a sandboxed script wrote (a
 * repository it made with `git init`, a nested one, a `.git` planted above a workspace under /tmp) or with
 * a global config it wrote would run that program outside the sandbox.
 *
 * The rule: find the repository git will use from the cwd (its discovery: the nearest `.git` above, a
 * `gitdir:` file followed, a linked worktree's `commondir`), and the global config files; any of their
 * code-running parts that lies in a folder a sandboxed run can write and changed (ctime, which no script can
 * set back) since the daemon's first sandboxed run started makes the escalation a run in the turn sandbox
 * instead (where git works: src/sandbox/protected.ts). Parts that the sandbox keeps read-only still count when
 * they changed since: the run that wrote them may have been the one that made the repository. A config the
 * user changed on the host during the session is also "changed": that git runs sandboxed (restarting the
 * daemon trusts it again). Limits: `include.path` targets are not followed; a repository planted between this
 * check and git's start is not seen (the sandbox's own protections still hold).
 * Not pure: stats the filesystem. Trust boundary: the cwd is the caller's, read by the daemon.
 */
import { lstatSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';

export interface GitTrustInput {
  cwd: string;
  /** folders a sandboxed run of this session can write (writableRootsFor) */
  writable: readonly string[];
  /** the start of the daemon's first sandboxed run: a part changed since may be a sandboxed run's */
  since: Date;
  /** the escalated run's HOME and XDG_CONFIG_HOME (the global config files) */
  home?: string;
  xdgConfigHome?: string;
}

const CODE_PARTS = ['config', 'config.worktree', 'commondir', 'hooks'];

/** A reason the escalated git must stay in the sandbox, or null when it may leave. */
export function gitEscalationRefusal(i: GitTrustInput): string | null {
  const writable = i.writable.map(realDir);
  const inWritable = (p: string) => writable.some((w) => p === w || p.startsWith(w.endsWith('/') ? w : w + '/'));
  const since = i.since.getTime();
  const suspect = (p: string): boolean => {
    const ct = ctime(p);
    return ct !== null && ct >= since && inWritable(real(p));
  };
  const parts = [...repositoryParts(realDir(i.cwd)), ...globalConfigs(i.home, i.xdgConfigHome)];
  const bad = parts.find(suspect);
  return bad === undefined ? null : `git would read ${bad}, which a sandboxed run could have written (changed since the first one started)`;
}

/** The code-running files of the repository git discovers from `cwd` (none when there is none). */
export function repositoryParts(cwd: string): string[] {
  for (let d = cwd; ; d = posix.dirname(d)) {
    const dotgit = posix.join(d, '.git');
    const kind = kindOf(dotgit);
    if (kind !== null) {
      // a `.git` file or link names the folder (a re-pointed one counts); a folder's own ctime changes with
      // every lock file git makes in it, which is no code
      const out = kind === 'dir' ? [] : [dotgit];
      let gitdir = dotgit;
      if (kind === 'file') {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotgit));
        if (!m) return out;
        gitdir = posix.resolve(d, m[1]);
      }
      out.push(...gitFolderParts(gitdir));
      const common = readText(posix.join(gitdir, 'commondir')).trim();
      if (common) out.push(...gitFolderParts(posix.resolve(gitdir, common)));
      return out;
    }
    if (d === '/') return [];
  }
}

function gitFolderParts(dir: string): string[] {
  const out = CODE_PARTS.map((p) => posix.join(dir, p));
  try {
    for (const h of readdirSync(posix.join(dir, 'hooks'))) out.push(posix.join(dir, 'hooks', h));
  } catch {
    // no hooks folder
  }
  return out;
}

function globalConfigs(home: string | undefined, xdg: string | undefined): string[] {
  const out: string[] = [];
  if (home) out.push(posix.join(home, '.gitconfig'));
  if (xdg) out.push(posix.join(xdg, 'git', 'config'));
  else if (home) out.push(posix.join(home, '.config', 'git', 'config'));
  return out;
}

function kindOf(p: string): 'file' | 'dir' | 'other' | null {
  try {
    const s = lstatSync(p);
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other';
  } catch {
    return null;
  }
}

function ctime(p: string): number | null {
  try {
    return lstatSync(p).ctimeMs;
  } catch {
    return null;
  }
}

function readText(p: string): string {
  try {
    return readFileSync(p, 'utf8').slice(0, 4096);
  } catch {
    return '';
  }
}

function realDir(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/** The path with its folders' symlinks resolved (the entry itself may be missing or a symlink). */
function real(p: string): string {
  try {
    return posix.join(realpathSync.native(posix.dirname(p)), posix.basename(p));
  } catch {
    return p;
  }
}
