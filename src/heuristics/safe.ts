/**
 * Known-safe commands (Codex `is_known_safe_command`, newest semantics, §3.1): read-only programs whose
 * arguments cannot make them write, execute or reach out. Pure; the `bash -lc` form is read with Codex's
 * plain-command parser so that its parity holds.
 */
import { parseShellLcPlainCommands } from '../script/index.js';
import { isGitReadOnly } from './git-read-only.js';

export interface SafeOptions {
  /** Opt in to the historic read-only git rules (off by default: repository config can run programs). */
  gitReadOnly?: boolean;
}

const ALWAYS_SAFE = new Set([
  'cat', 'cd', 'cut', 'echo', 'expr', 'false', 'grep', 'head', 'id', 'ls', 'nl', 'paste', 'pwd', 'rev', 'seq',
  'stat', 'tail', 'tr', 'true', 'uname', 'uniq', 'wc', 'which', 'whoami',
  // Linux only in Codex; gate-sh runs on Linux.
  'numfmt', 'tac',
]);

const FIND_UNSAFE = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fls', '-fprint', '-fprint0', '-fprintf']);
const RG_UNSAFE_BARE = new Set(['--search-zip', '-z']);
const RG_UNSAFE_VALUE = ['--pre', '--hostname-bin'];
const SED_RANGE = /^(\d+,)?\d+p$/;

function isShortCluster(a: string): boolean {
  return a.length > 1 && a[0] === '-' && a[1] !== '-';
}

/** Safe to exec as is. The program must be a bare name: `./cat` or `/tmp/ws/cat` can impersonate `cat`. */
export function isSafeToCallWithExec(argv: readonly string[], opts: SafeOptions = {}): boolean {
  const prog = argv[0];
  if (prog === undefined || prog === '' || prog.includes('/')) return false;
  const args = argv.slice(1);
  if (ALWAYS_SAFE.has(prog)) return true;
  switch (prog) {
    case 'base64':
      // gate-sh: also `-do out` (an `o` anywhere in a short-option cluster writes a file)
      return !args.some((a) => a === '--output' || a.startsWith('--output=') || (isShortCluster(a) && a.includes('o')));
    case 'find':
      return !args.some((a) => FIND_UNSAFE.has(a));
    case 'rg':
      // gate-sh: also `-nz` (search-zip runs decompressors); Codex only rejects a lone `-z`
      return !args.some(
        (a) => RG_UNSAFE_BARE.has(a) || RG_UNSAFE_VALUE.some((o) => a === o || a.startsWith(`${o}=`)) || (isShortCluster(a) && a.includes('z')),
      );
    case 'sed':
      return argv.length <= 4 && argv[1] === '-n' && SED_RANGE.test(argv[2] ?? '');
    case 'git':
      return opts.gitReadOnly === true && isGitReadOnly(args);
    default:
      return false;
  }
}

/** Codex `is_known_safe_command`: the argv itself, or a plain `bash|zsh|sh -c|-lc` script of safe commands. */
export function isKnownSafeCommand(argv: readonly string[], opts: SafeOptions = {}): boolean {
  const cmd = argv.map((t) => (t === 'zsh' ? 'bash' : t));
  if (isSafeToCallWithExec(cmd, opts)) return true;
  const inner = parseShellLcPlainCommands(cmd);
  return inner !== null && inner !== undefined && inner.length > 0 && inner.every((c) => isSafeToCallWithExec(c, opts));
}
