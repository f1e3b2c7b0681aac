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
 * daemon trusts it again). What those config files name counts the same: every `include.path` and
 * `includeIf.*.path` file (followed whatever its condition), and every path a value names (a `core.hooksPath`
 * folder in the working tree as husky sets it, and its hooks; a filter's or alias's script; a remote's local
 * repository, whose hooks a push runs on the receiving side). So do the repositories the command's own
 * arguments name by a local path (`git push ../other.git`), and an argument naming a program for git to run
 * (`--receive-pack`, `--upload-pack`, `--exec`, `--template`) keeps it in the sandbox whatever it says.
 * Limits: a repository planted between this check and git's start is not seen (the sandbox's own protections
 * still hold); a program a config names by its bare name is found by PATH (decided on its own); what a
 * trusted hook itself runs (`npm test`, `make lint`) reads the working tree, which the sandbox writes.
 * Not pure: stats and reads the filesystem. Trust boundary: the cwd and argv are the caller's, read by the daemon.
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
  /** the git command's argv (argv[0] git): local repositories and programs it names */
  argv?: readonly string[];
  /** the code-loading variables the escalated git runs with (the decided ones: GIT_DIR, GIT_CONFIG_*...) */
  env?: Readonly<Record<string, string>>;
  /** when sandboxed runs of earlier daemons could write, and where (sandboxed-periods.ts): a git folder, a
   * `.git` file or a hook made then, there (its birth time), is the sandbox's too */
  earlier?: readonly (readonly [number, number, readonly string[]])[];
}

const CODE_PARTS = ['config', 'config.worktree', 'commondir', 'hooks'];

/** Options that name a program git runs (`git push --receive-pack='sh -c ...' ../repo` runs it with the shell),
 * or a template whose hooks a new repository gets. */
const PROGRAM_OPTIONS = /^--(receive-pack|upload-pack|exec|template)(=|$)/;

/** A reason the escalated git must stay in the sandbox, or null when it may leave. */
export function gitEscalationRefusal(i: GitTrustInput): string | null {
  const named = (i.argv ?? []).find((a) => PROGRAM_OPTIONS.test(a));
  if (named !== undefined) return `git would run the program ${named.split('=')[0]} names`;
  const writable = i.writable.map(realDir);
  const inWritable = (p: string) => writable.some((w) => p === w || p.startsWith(w.endsWith('/') ? w : w + '/'));
  const since = i.since.getTime();
  const suspect = (p: string): boolean => {
    const ct = ctime(p);
    return ct !== null && ct >= since && inWritable(real(p));
  };
  const cwd = realDir(i.cwd);
  const env = i.env ?? {};
  // GIT_DIR names the repository git uses (GIT_WORK_TREE its top, else the cwd); GIT_COMMON_DIR its common folder
  const gitDir = env.GIT_DIR ? posix.resolve(cwd, env.GIT_DIR) : undefined;
  const repo = gitDir ? { parts: repositoryFolderParts(gitDir, true), top: env.GIT_WORK_TREE ? posix.resolve(cwd, env.GIT_WORK_TREE) : cwd } : discover(cwd);
  const parts = [...repo.parts, ...globalConfigs(i.home, i.xdgConfigHome), SYSTEM_CONFIG];
  const bases = [...new Set([repo.top, cwd].filter((b): b is string => b !== undefined))];
  if (env.GIT_COMMON_DIR) parts.push(...gitFolderParts(posix.resolve(cwd, env.GIT_COMMON_DIR)));
  // any other GIT_* value naming a path: a config file (GIT_CONFIG_GLOBAL), a template or exec folder, a
  // program (GIT_SSH, GIT_EXTERNAL_DIFF), a config value (GIT_CONFIG_VALUE_n)
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GIT_') || name === 'GIT_DIR' || name === 'GIT_COMMON_DIR' || name === 'GIT_WORK_TREE') continue;
    for (const word of value.split(/[\s;|&()<>'"`,=]+/)) parts.push(...namedPaths(word, bases, i.home));
  }
  // a local repository the command names (`git push ../other.git`, `--repo=...`): a pathspec is no repository
  for (const a of (i.argv ?? []).slice(1)) parts.push(...namedPaths(a.replace(/^--[a-z-]+=/, ''), bases, i.home, true));
  parts.push(...configNamed(parts, bases, i.home));
  const all = [...parts, ...linkTargets(parts)];
  const bad = all.find(suspect);
  if (bad !== undefined) return `git would read ${bad}, which a sandboxed run could have written (changed since the first one started)`;
  const earlier = i.earlier ?? [];
  const madeEarlier = (p: string): boolean => {
    const b = birth(p);
    if (b === null) return false;
    const r = real(p);
    return earlier.some(([s, e, w]) => b >= s && b <= e && w.some((d) => r === d || r.startsWith(d.endsWith('/') ? d : d + '/')));
  };
  const old = earlier.length > 0 ? births(all).find(madeEarlier) : undefined;
  return old === undefined ? null : `git would use ${old}, which was made while sandboxed runs of an earlier daemon could write`;
}

/**
 * What was made, not changed, decides for earlier daemons' periods: the git folders (one holding `config`
 * and `HEAD`), `.git` files and hooks (entries of a `hooks` folder or of a folder a config names). A config
 * file the user edited then is not counted (git rewrites it on every `git config`, `push -u`): only one in a
 * repository made then, through its folder.
 */
function births(parts: readonly string[]): string[] {
  const set = new Set(parts);
  const out = new Set<string>();
  for (const p of parts) {
    const dir = posix.dirname(p);
    if (posix.basename(p) === 'config' && kindOf(posix.join(dir, 'HEAD')) === 'file') out.add(dir);
    else if (posix.basename(p) === '.git' && kindOf(p) !== 'dir') out.add(p);
    else if (posix.basename(dir) === 'hooks' || set.has(dir)) out.add(p);
  }
  return [...out];
}

/** The birth time (statx), null where the filesystem keeps none. */
function birth(p: string): number | null {
  try {
    const b = lstatSync(p).birthtimeMs;
    return b > 0 ? b : null;
  } catch {
    return null;
  }
}

const SYSTEM_CONFIG = '/etc/gitconfig';

/** The repository git discovers from `cwd`: its code-running files and its working tree's top. */
function discover(cwd: string): { parts: string[]; top?: string } {
  for (let d = cwd; ; d = posix.dirname(d)) {
    if (kindOf(posix.join(d, '.git')) !== null) return { parts: repositoryParts(d), top: d };
    if (d === '/') return { parts: [] };
  }
}

/**
 * The files and folders a config file (and every file it includes) names, each as the parts git would
 * read there: an included file; a folder (a hooks folder: it and its entries; a repository: its parts); a
 * file (a script). Read from every config file among `parts`, trusted or not (one changed since is
 * suspect by itself; one unchanged is the user's, and only says where to look).
 */
function configNamed(parts: readonly string[], bases: readonly string[], home: string | undefined): string[] {
  const out: string[] = [];
  const queue = parts.filter(isConfigFile);
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 64) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const { key, value } of configEntries(readText(file, 256 * 1024))) {
      if (/^include(if\..*)?\.path$/i.test(key)) {
        const inc = expand(value, posix.dirname(file), home);
        if (inc !== undefined) (out.push(inc), queue.push(inc));
        continue;
      }
      for (const word of value.split(/[\s;|&()<>'"`,=]+/)) out.push(...namedPaths(word, [...bases, posix.dirname(file)], home));
    }
  }
  return out;
}

const isConfigFile = (p: string) => /(^|\/)(config|config\.worktree|\.gitconfig|gitconfig)$/.test(p);

/** `key = value` lines of a git config file, the section's name folded into the key (loose: quotes and
 * comments are left in the value, which is only searched for paths). */
export function configEntries(text: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (head) {
      section = head[2] === undefined ? head[1] : `${head[1]}.${head[2]}`;
      const rest = head[3] ? entry(head[3]) : undefined;
      if (rest) out.push({ key: `${section}.${rest.name}`, value: rest.value });
      continue;
    }
    const kv = entry(line);
    if (kv) out.push({ key: `${section}.${kv.name}`, value: kv.value });
  }
  return out;
}

/** One `name = value` (or a bare `name`) line. */
function entry(line: string): { name: string; value: string } | undefined {
  const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
  return kv ? { name: kv[1], value: kv[2] ?? '' } : undefined;
}

/** A word of a config value or of argv that names a local path: what git would read there (`repos`: only
 * a repository's parts). */
function namedPaths(word: string, bases: readonly string[], home: string | undefined, repos = false): string[] {
  const w = word.startsWith('file://') ? word.slice('file://'.length) : word;
  if (!w || w.includes('://') || /^[^/]*:/.test(w) || !(w.includes('/') || w.startsWith('~') || w.startsWith('.'))) return [];
  const out: string[] = [];
  for (const base of bases) {
    const p = expand(w, base, home);
    if (p === undefined || out.includes(p)) continue;
    const kind = kindOf(p);
    const dir = kind === 'dir' || (kind === 'other' && kindOf(realDir(p)) === 'dir');
    if (dir) out.push(...(repos ? repositoryFolderParts(realDir(p)) : folderParts(realDir(p))));
    if (!repos && kind !== null && (kind !== 'dir' || p !== realDir(p))) out.push(p);
  }
  return out;
}

/** A folder's repository parts: a bare repository's own, or those of the repository its `.git` names
 * (`gitDir`: the folder is a git folder whatever it holds, as GIT_DIR names one). */
function repositoryFolderParts(dir: string, gitDir = false): string[] {
  if (gitDir || (kindOf(posix.join(dir, 'HEAD')) === 'file' && kindOf(posix.join(dir, 'objects')) === 'dir')) {
    const common = readText(posix.join(dir, 'commondir')).trim();
    return [...gitFolderParts(dir), ...(common ? gitFolderParts(posix.resolve(dir, common)) : [])];
  }
  return kindOf(posix.join(dir, '.git')) !== null ? repositoryParts(dir) : [];
}

/** A folder a config value or argument names: a repository's parts (bare or not), or the folder and its
 * entries (a hooks folder). */
function folderParts(dir: string): string[] {
  const repo = repositoryFolderParts(dir);
  if (repo.length > 0) return repo;
  const out = [dir];
  try {
    for (const e of readdirSync(dir).slice(0, 256)) out.push(posix.join(dir, e));
  } catch {
    // unreadable: the folder itself counts
  }
  return out;
}

/** `~/x` under HOME, a relative path under `base`; undefined for `~user/...`. */
function expand(p: string, base: string, home: string | undefined): string | undefined {
  if (p.startsWith('~/')) return home ? posix.join(home, p.slice(2)) : undefined;
  if (p.startsWith('~')) return undefined;
  return posix.resolve(base, p);
}

/** The targets of the parts that are symlinks (a hook linked to a script elsewhere). */
function linkTargets(parts: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (kindOf(p) !== 'other') continue;
    try {
      out.push(realpathSync.native(p));
    } catch {
      // dangling: nothing to run
    }
  }
  return out;
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

function readText(p: string, max = 4096): string {
  try {
    return readFileSync(p, 'utf8').slice(0, max);
  } catch {
    return '';
  }
}

/** The folder's real path (as given when it cannot be resolved). */
export function realFolder(p: string): string {
  return realDir(p);
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
