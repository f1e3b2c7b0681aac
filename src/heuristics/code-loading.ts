/**
 * Environment variables that make a program load or run code it was not asked to: an escalated run
 * outside the sandbox must not inherit them silently (`LD_PRELOAD=./evil.so git status` under an allowed
 * `git status` rule). Pure: the caller passes the exec's environment and what it trusts.
 */
import { isAbsolute, normalize, sep } from 'node:path';

/** Always code-loading when set (dynamic loader, shells, git, interpreters, pagers and editors). */
const NAMES = new Set([
  'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'LD_PROFILE', 'GCONV_PATH', 'LOCPATH', 'HOSTALIASES',
  'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'ZDOTDIR', 'INPUTRC',
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_EXEC_PATH', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_TEMPLATE_DIR',
  'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_ASKPASS', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'GIT_PAGER',
  'GIT_EXTERNAL_DIFF', 'GIT_PROXY_COMMAND', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_OBJECT_DIRECTORY',
  'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONINSPECT', 'PYTHONBREAKPOINT',
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE',
  'PERL5LIB', 'PERLLIB', 'PERL5OPT', 'PERL5DB', 'RUBYOPT', 'RUBYLIB', 'GEM_PATH', 'GEM_HOME',
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH',
  'PAGER', 'MANPAGER', 'SYSTEMD_PAGER', 'GH_PAGER', 'LESSOPEN', 'LESSCLOSE', 'EDITOR', 'VISUAL', 'BROWSER',
  'SSH_ASKPASS', 'SUDO_ASKPASS', 'LD_BIND_NOT', 'MAKEFLAGS', 'MFLAGS', 'CARGO_HOME', 'RUSTC_WRAPPER',
  'NPM_CONFIG_USERCONFIG', 'npm_config_userconfig', 'NPM_CONFIG_PREFIX', 'PIP_CONFIG_FILE',
]);
/** Families: any variable with one of these prefixes (git config overrides, exported bash functions, DYLD). */
const PREFIXES = ['GIT_CONFIG', 'BASH_FUNC_', 'LD_', 'DYLD_'];
/**
 * Pager and editor variables: each names a program that git, man, gh... run. A value naming a program
 * that runs nothing else is no code loading (agents export `PAGER=cat GIT_PAGER=cat`, `GIT_EDITOR=true`
 * to every command); any other value (`sh -c ...`, `/tmp/evil`, `less` with an option list) is decided as
 * today. Bare names only: a path could be a copy, and PATH is decided on its own.
 */
const PAGERS = new Set(['PAGER', 'GIT_PAGER', 'MANPAGER', 'SYSTEMD_PAGER', 'GH_PAGER']);
const EDITORS = new Set(['EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR']);
/** `cat` copies; `less` with only flag clusters pages (its LESSOPEN is decided on its own); an empty pager is git's "no pager". */
const SAFE_PAGER = /^(|cat|less( -[A-Za-z]+)*)$/;
/** `true` and `:` leave the file as it is (git then uses it unchanged). */
const SAFE_EDITOR = /^(true|:)$/;

/** An empty askpass is none: git, ssh and sudo ask on the terminal, or fail, and run nothing. */
const ASKPASS = new Set(['GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS']);

/** Does this variable's value name a program that loads or runs nothing else? */
export function isSafeValue(name: string, value: string): boolean {
  if (PAGERS.has(name)) return SAFE_PAGER.test(value);
  if (EDITORS.has(name)) return SAFE_EDITOR.test(value);
  if (ASKPASS.has(name)) return value === '';
  return false;
}

/**
 * git's configuration from the environment that only takes code away (gemini-cli gives every
 * command `GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1` and `GIT_CONFIG_COUNT=8` pairs that empty
 * `credential.helper`, `core.fsmonitor`, `core.hooksPath`, `core.sshCommand`, `core.editor`, `diff.external`,
 * ..., and set `core.pager=cat`): the names of those variables, when every `GIT_CONFIG_KEY_n`/`VALUE_n`
 * pair below `GIT_CONFIG_COUNT` is there and sets an empty value (git's "none") or a safe pager. A global or
 * system file of `/dev/null` reads nothing; `GIT_CONFIG_NOSYSTEM` only skips a file. Anything else (a pair
 * with a value, a missing pair, `GIT_CONFIG_PARAMETERS`, another file) is decided by name, as before. Pure.
 */
export function harmlessGitConfig(env: Readonly<Record<string, string | undefined>>): Set<string> {
  const out = new Set<string>();
  for (const name of ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM']) if (env[name] === '/dev/null') out.add(name);
  if (env.GIT_CONFIG_NOSYSTEM !== undefined) out.add('GIT_CONFIG_NOSYSTEM');
  const count = env.GIT_CONFIG_COUNT;
  if (count === undefined || !/^(0|[1-9][0-9]{0,3})$/.test(count)) return out;
  const pairs: string[] = [];
  for (let i = 0; i < Number(count); i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`];
    const value = env[`GIT_CONFIG_VALUE_${i}`];
    if (key === undefined || value === undefined) return out;
    const pager = /^(core\.pager|pager\.[A-Za-z0-9-]+)$/i.test(key) && SAFE_PAGER.test(value);
    if (value !== '' && !pager) return out;
    pairs.push(`GIT_CONFIG_KEY_${i}`, `GIT_CONFIG_VALUE_${i}`);
  }
  for (const p of ['GIT_CONFIG_COUNT', ...pairs]) out.add(p);
  return out;
}

/** Directories a PATH may always contain (root-owned system folders). */
const SYSTEM_DIRS = new Set(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);

/** The variable names and prefixes this module decides on (plus PATH), e.g. for the exec shim to forward. */
export function codeLoadingNames(): { names: string[]; prefixes: string[] } {
  return { names: ['PATH', ...[...NAMES].sort()], prefixes: [...PREFIXES] };
}

/** Is this variable one the check looks at? (PATH included.) */
export function isCodeLoadingName(name: string): boolean {
  return name === 'PATH' || NAMES.has(name) || PREFIXES.some((p) => name.startsWith(p));
}

export interface CodeLoadingOptions {
  /** Writable roots of the caller's sandbox: new PATH entries inside them are flagged. Absent: any new
   * PATH entry outside the system folders is flagged. */
  writableRoots?: readonly string[];
  /** A trusted environment (the daemon's own or the captured login environment): a variable with exactly
   * this value, or a PATH entry already in its PATH, is not flagged. */
  trusted?: Readonly<Record<string, string | undefined>>;
  /** gate-sh's own list entries, e.g. `{ LD_PRELOAD: ['/…/gate-shim.so'] }`: those entries are not flagged. */
  own?: Readonly<Record<string, readonly string[]>>;
  /** The program that would run with them (its path or name): a variable only its own tools read (MAKEFLAGS
   * for make, PYTHONPATH for python, ...) is not decided for a program known to start no other program. */
  program?: string;
  /** The exec's argv (argv[0] first), with `program`: for git, which subcommand runs (readBy). */
  argv?: readonly string[];
}

/**
 * Variables only one tool family reads: `MAKEFLAGS` matters to make, `PYTHONPATH` to python. For a program
 * that starts no other program (LEAVES), they load nothing; for anything else they are decided, since a
 * program may start a reader with them (git runs hooks, make runs anything). The loader's `LD_*`, the
 * shells' `BASH_ENV`, the pagers and editors and PATH are decided for every program: nearly every program
 * is dynamic, and those are read by whatever a program starts.
 */
const READERS: [RegExp, RegExp][] = [
  [/^(MAKEFLAGS|MFLAGS|GNUMAKEFLAGS)$/, /^g?make$/],
  [/^PYTHON/, /^(python[0-9.]*|pypy[0-9.]*|pip[0-9.]*)$/],
  [/^(NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|NPM_CONFIG_USERCONFIG|npm_config_userconfig|NPM_CONFIG_PREFIX)$/, /^(node|nodejs|npm|npx)$/],
  [/^(PERL5LIB|PERLLIB|PERL5OPT|PERL5DB)$/, /^perl[0-9.]*$/],
  [/^(RUBYOPT|RUBYLIB|GEM_PATH|GEM_HOME)$/, /^(ruby|gem|bundle|rake)$/],
  [/^(JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH)$/, /^(java|javac)$/],
  [/^(CARGO_HOME|RUSTC_WRAPPER)$/, /^(cargo|rustc)$/],
  [/^PIP_CONFIG_FILE$/, /^pip[0-9.]*$/],
];
/** Programs that start no other program, whatever their arguments (coreutils that only touch files, the
 * download tools). */
const LEAVES = new Set([
  'rm', 'rmdir', 'mkdir', 'cp', 'mv', 'ln', 'touch', 'chmod', 'chown', 'chgrp', 'cat', 'ls', 'echo', 'true', 'false',
  'head', 'tail', 'wc', 'uniq', 'cut', 'tr', 'tee', 'date', 'sleep', 'stat', 'du', 'df', 'id', 'whoami', 'uname',
  'readlink', 'realpath', 'basename', 'dirname', 'mktemp', 'truncate', 'sync', 'curl', 'wget',
]);

/**
 * git subcommands that never start an editor, whatever their arguments (`git status` under an
 * allow rule was asked about because the user's `EDITOR=vi` would go with it out of the sandbox). Left out:
 * everything that may edit (commit, merge, rebase, tag, notes, revert, cherry-pick, pull, am, config -e,
 * branch --edit-description) or offer to edit a hunk (add, checkout, reset, restore, stash -p), and
 * everything that runs other commands (submodule foreach, bisect run, difftool, mergetool, help).
 */
const GIT_NEVER_EDITS = new Set([
  'status', 'diff', 'log', 'show', 'whatchanged', 'shortlog', 'blame', 'grep', 'describe', 'ls-files', 'ls-tree',
  'ls-remote', 'rev-parse', 'rev-list', 'cat-file', 'show-ref', 'for-each-ref', 'diff-files', 'diff-index',
  'diff-tree', 'name-rev', 'merge-base', 'check-ignore', 'check-attr', 'count-objects', 'version', 'fetch',
  'push', 'clone', 'init', 'mv', 'rm', 'archive', 'fsck', 'gc', 'reflog',
]);
/** git's global options that take the next word as their value. */
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--exec-path']);
/** git's global options alone (any `--name=value` form is one word too). */
const GIT_GLOBAL_FLAGS = /^(-p|-P|--paginate|--no-pager|--bare|--no-replace-objects|--no-optional-locks|--(literal|glob|noglob|icase)-pathspecs|--exec-path|--[a-z-]+=.*)$/;

/** The git subcommand an argv runs (argv[0] is git), or undefined when its global options cannot be read. */
function gitSubcommand(argv: readonly string[]): string | undefined {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (GIT_GLOBAL_WITH_VALUE.has(a) && a !== '--exec-path') i++;
    else if (/^-[Cc]./.test(a) || GIT_GLOBAL_FLAGS.test(a)) continue;
    else return a.startsWith('-') ? undefined : a;
  }
  return undefined;
}

/** Does `program` read `name`, or may it start something that does? */
export function readBy(name: string, program: string | undefined, argv?: readonly string[]): boolean {
  if (program === undefined) return true;
  const base = program.slice(program.lastIndexOf('/') + 1);
  // an editor is started by programs that edit: not by one that starts nothing, nor by git's read-only,
  // transfer and bookkeeping subcommands
  if (EDITORS.has(name)) {
    if (LEAVES.has(base)) return false;
    const sub = base === 'git' && argv ? gitSubcommand(argv) : undefined;
    return sub === undefined || !GIT_NEVER_EDITS.has(sub);
  }
  const family = READERS.find(([v]) => v.test(name));
  if (!family) return true;
  return family[1].test(base) || !LEAVES.has(base);
}

export interface CodeLoadingVariable {
  name: string;
  value: string;
  reason: string;
}

/** Every code-loading variable in `env`, in name order (stable for prompts and logs). */
export function codeLoadingVariables(env: Readonly<Record<string, string | undefined>>, opts: CodeLoadingOptions = {}): CodeLoadingVariable[] {
  const out: CodeLoadingVariable[] = [];
  const gitConfig = harmlessGitConfig(env);
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || opts.trusted?.[name] === value || gitConfig.has(name)) continue;
    if (name === 'PATH') {
      const bad = riskyPathEntries(value, opts);
      if (bad.length) out.push({ name, value, reason: `PATH entries that can shadow programs: ${bad.map((e) => e || '(empty = cwd)').join(', ')}` });
      continue;
    }
    if (!isCodeLoadingName(name) || isSafeValue(name, value) || !readBy(name, opts.program, opts.argv)) continue;
    const own = opts.own?.[name];
    if (own && value.split(/[: ]/).every((e) => e === '' || own.includes(e))) continue;
    out.push({ name, value, reason: `${name} can make the program load or run other code` });
  }
  return out;
}

function riskyPathEntries(value: string, opts: CodeLoadingOptions): string[] {
  const trusted = new Set((opts.trusted?.PATH ?? '').split(':').filter((e) => e !== ''));
  return value.split(':').filter((e) => {
    if (e === '' || !isAbsolute(e)) return true; // relative entries follow the cwd
    const n = normalize(e).replace(/\/+$/, '') || '/';
    if (trusted.has(e) || trusted.has(n)) return false;
    if (opts.writableRoots) return opts.writableRoots.some((r) => isInside(n, r));
    return !SYSTEM_DIRS.has(n);
  });
}

function isInside(p: string, root: string): boolean {
  const r = normalize(root).replace(/\/+$/, '');
  return r === '' || p === r || p.startsWith(r + sep);
}
