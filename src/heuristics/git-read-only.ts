/**
 * The historic Codex read-only git rules (opt-in only, `--git-read-only`): newest Codex never treats git as
 * safe because repository config (`core.fsmonitor`, pagers, diff drivers) can make `git status` run programs.
 * This is the strictest historic variant: no config overrides, no pager, no patch output, no output files.
 */
const GLOBAL_WITH_VALUE = new Set(['-C', '--exec-path', '--git-dir', '--namespace', '--super-prefix', '--work-tree']);
const READ_ONLY = new Set(['status', 'log', 'diff', 'show', 'branch']);
const BRANCH_READ_ONLY = new Set(['--list', '-l', '--show-current', '-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose']);
const UNSAFE_ARG = new Set(['--output', '--ext-diff', '--textconv', '--exec', '--paginate', '-p', '--patch']);

/** `args` are git's arguments (argv without the program). */
export function isGitReadOnly(args: readonly string[]): boolean {
  // Config can name programs (core.pager, diff.external, core.fsmonitor): never safe with overrides.
  if (args.some((a) => a === '-c' || a.startsWith('-c') && !a.startsWith('--') || a === '--config-env' || a.startsWith('--config-env='))) return false;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-')) break;
    if (GLOBAL_WITH_VALUE.has(a)) { i++; continue; }
    if (a.startsWith('-C') || [...GLOBAL_WITH_VALUE].some((o) => o.startsWith('--') && a.startsWith(`${o}=`))) continue;
    return false; // -p/--paginate and any other global option
  }
  const sub = args[i];
  if (sub === undefined || !READ_ONLY.has(sub)) return false;
  const rest = args.slice(i + 1);
  if (rest.some((a) => UNSAFE_ARG.has(a) || a.startsWith('--output=') || a.startsWith('--exec='))) return false;
  if (sub === 'branch') return rest.every((a) => BRANCH_READ_ONLY.has(a) || a.startsWith('--format='));
  return true;
}
