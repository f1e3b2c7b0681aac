/**
 * Wrappers: programs that run another program given in their own argv. Each is seen through with its
 * own option grammar, yielding the inner command(s), outermost first. Programs that run a command
 * string or a script we cannot see are marked opaque (never auto-allowed).
 * Pure: a bash -c script is analysed by the `analyze` callback the caller passes in.
 */
import { basename } from 'node:path';
import type { ScriptAnalysis, Unwrapped } from './types.js';

export type ScriptAnalyzer = (script: string) => ScriptAnalysis;

/** Where the inner command starts, or why it cannot be seen. `null` start: the wrapper runs nothing. */
type Step = { start: number | null; opaque?: string; more?: string[][] };

const MAX_DEPTH = 8;

export function unwrapWith(argv: string[], analyze: ScriptAnalyzer, depth = 0): Unwrapped {
  const inner: string[][] = [];
  let opaque: string | undefined;
  let cur = argv;
  for (let guard = 0; cur.length > 0 && guard < 64; guard++) {
    if (depth > MAX_DEPTH) return { inner, opaque: 'wrappers nested too deeply' };
    const name = basename(cur[0]);
    const shell = SHELL_NAMES.has(name) ? shellStep(cur, analyze, depth) : null;
    if (shell) {
      inner.push(...shell.inner);
      return { inner, opaque: opaque ?? shell.opaque };
    }
    const grammar = GRAMMARS[name];
    if (grammar) {
      const step = grammar(cur);
      if (step.more) for (const m of step.more) pushUnwrapped(inner, m, analyze, depth, (o) => (opaque ??= o));
      if (step.opaque) opaque ??= `${name}: ${step.opaque}`;
      if (step.start === null || step.start >= cur.length) break;
      cur = cur.slice(step.start);
      inner.push(cur);
      continue;
    }
    const why = OPAQUE[name] ?? inlineCode(name, cur);
    if (why) opaque ??= `${name} ${why}`;
    break;
  }
  return opaque === undefined ? { inner } : { inner, opaque };
}

function pushUnwrapped(inner: string[][], argv: string[], analyze: ScriptAnalyzer, depth: number, setOpaque: (o: string) => void): void {
  inner.push(argv);
  const u = unwrapWith(argv, analyze, depth + 1);
  inner.push(...u.inner);
  if (u.opaque) setOpaque(u.opaque);
}

// ---- shells: bash|sh|zsh|dash|ksh [options] -c 'script' [$0 args...] ----

const SHELL_NAMES = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);
const SHELL_OPT_ARG = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);

function shellStep(argv: string[], analyze: ScriptAnalyzer, depth: number): Unwrapped {
  let c = false;
  let stdin = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--' || a === '-') { i++; break; }
    if (SHELL_OPT_ARG.has(a)) { i++; continue; }
    if (a.startsWith('--')) continue; // --login, --noprofile, --norc, --posix, ...
    if (/^[-+][A-Za-z]+$/.test(a)) {
      if (a[0] === '-' && a.includes('c')) c = true;
      if (a[0] === '-' && a.includes('s')) stdin = true;
      continue;
    }
    break;
  }
  const name = basename(argv[0]);
  if (!c) {
    if (stdin || i >= argv.length) return { inner: [], opaque: `${name} reads commands from stdin` };
    return { inner: [], opaque: `${name} runs script file ${argv[i]}` };
  }
  if (i >= argv.length) return { inner: [], opaque: `${name} -c without a script` };
  if (depth > MAX_DEPTH) return { inner: [], opaque: 'shells nested too deeply' };
  const a = analyze(argv[i]);
  const inner: string[][] = [];
  let opaque: string | undefined;
  const cmds = a.kind === 'plain' ? a.commands : a.literalCommands;
  for (const sc of cmds) {
    if (sc.argv.length > 0) inner.push(sc.argv);
    inner.push(...sc.inner);
    if (sc.opaque) opaque ??= sc.opaque;
  }
  if (a.kind === 'complex') opaque = `${name} -c script is complex: ${a.reasons.join('; ')}`;
  return opaque === undefined ? { inner } : { inner, opaque };
}

// ---- option grammars ----

interface Grammar {
  /** Short options that take a value (`-u NAME` or `-uNAME`). */
  shortArg?: string;
  /** Long options that take a value (`--user NAME` or `--user=NAME`). */
  longArg?: string[];
  /** Options after which nothing we can see runs, with the reason (`-S` for env). */
  opaqueOpts?: Record<string, string>;
  /** Options after which the wrapper runs nothing (`command -v`). */
  noRun?: string;
  /** Skip NAME=VALUE words before the command. */
  assignments?: boolean;
  /** Positional words before the command (timeout's DURATION). */
  positional?: number;
  /** Numeric short options like `nice -10`. */
  numericOpt?: boolean;
  /** A lone `-` is an option (env: same as -i). */
  dashOption?: boolean;
}

function optionGrammar(g: Grammar): (argv: string[]) => Step {
  return (argv) => {
    let i = 1;
    for (; i < argv.length; i++) {
      const a = argv[i];
      if (a === '--') { i++; break; }
      if (a === '-' && g.dashOption) continue;
      if (a.startsWith('--') && a.length > 2) {
        const [name] = a.split('=', 1);
        if (g.opaqueOpts && name in g.opaqueOpts) return { start: null, opaque: g.opaqueOpts[name] };
        if (g.noRun && g.noRun.split(' ').includes(name)) return { start: null };
        if (g.longArg?.includes(name) && !a.includes('=')) i++;
        continue;
      }
      if (a.startsWith('-') && a.length > 1) {
        if (g.numericOpt && /^-\d+$/.test(a)) continue;
        for (let k = 1; k < a.length; k++) {
          const ch = '-' + a[k];
          if (g.opaqueOpts && ch in g.opaqueOpts) return { start: null, opaque: g.opaqueOpts[ch] };
          if (g.noRun && g.noRun.split(' ').includes(ch)) return { start: null };
          if (g.shortArg?.includes(a[k])) {
            if (k === a.length - 1) i++;
            break;
          }
        }
        continue;
      }
      if (g.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) continue;
      break;
    }
    i += g.positional ?? 0;
    return { start: i < argv.length ? i : null };
  };
}

function findExec(argv: string[]): Step {
  const more: string[][] = [];
  for (let i = 1; i < argv.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(argv[i])) continue;
    let j = i + 1;
    while (j < argv.length && argv[j] !== ';' && !(argv[j] === '+' && argv[j - 1] === '{}')) j++;
    if (j > i + 1) more.push(argv.slice(i + 1, j));
    i = j;
  }
  return { start: null, more };
}

function xargsStep(argv: string[]): Step {
  const s = optionGrammar({ shortArg: 'IiEedLlnPsa', longArg: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--max-lines', '--process-slot-var'] })(argv);
  // xargs with no command runs echo; its arguments come from stdin (not visible here).
  if (s.start === null) return { start: null, more: [['echo']] };
  return s;
}

const GRAMMARS: Record<string, (argv: string[]) => Step> = {
  env: optionGrammar({ shortArg: 'uC', longArg: ['--unset', '--chdir'], opaqueOpts: { '-S': 'split-string (-S) command is opaque', '--split-string': 'split-string command is opaque' }, assignments: true, dashOption: true }),
  timeout: optionGrammar({ shortArg: 'ks', longArg: ['--kill-after', '--signal'], positional: 1 }),
  nice: optionGrammar({ shortArg: 'n', longArg: ['--adjustment'], numericOpt: true }),
  nohup: optionGrammar({}),
  stdbuf: optionGrammar({ shortArg: 'ioe', longArg: ['--input', '--output', '--error'] }),
  time: optionGrammar({ shortArg: 'fo', longArg: ['--format', '--output'] }),
  command: optionGrammar({ noRun: '-v -V' }),
  exec: optionGrammar({ shortArg: 'a' }),
  builtin: optionGrammar({}),
  sudo: optionGrammar({
    shortArg: 'CDghprtTUu', longArg: ['--close-from', '--chdir', '--group', '--host', '--prompt', '--role', '--type', '--command-timeout', '--other-user', '--user'],
    opaqueOpts: { '-s': 'runs a shell (-s)', '--shell': 'runs a shell', '-i': 'runs a login shell (-i)', '--login': 'runs a login shell', '-e': 'edits files (sudoedit)', '--edit': 'edits files (sudoedit)' },
    noRun: '-l --list -v --validate -k -K --reset-timestamp --remove-timestamp -V --version -h --help',
    assignments: true,
  }),
  doas: optionGrammar({ shortArg: 'uC', opaqueOpts: { '-s': 'runs a shell (-s)' }, noRun: '-L' }),
  xargs: xargsStep,
  find: findExec,
};

/** Programs that run commands we cannot see (a command string, a remote shell, a script). */
const OPAQUE: Record<string, string> = {
  eval: 'evaluates a string as a script',
  source: 'runs a script file in this shell',
  '.': 'runs a script file in this shell',
  su: 'runs a shell as another user',
  ssh: 'runs a remote command',
  watch: 'runs a command string',
  parallel: 'runs command strings',
  flock: 'runs a command or command string',
  script: 'runs a command string',
  busybox: 'runs applets and shells',
  fish: 'runs a shell',
  tcsh: 'runs a shell',
  csh: 'runs a shell',
  chroot: 'runs a command in another root',
  setsid: 'runs a command',
  taskset: 'runs a command',
  ionice: 'runs a command',
  chrt: 'runs a command',
  unshare: 'runs a command',
  nsenter: 'runs a command',
  runuser: 'runs a command as another user',
  pkexec: 'runs a command as another user',
  strace: 'runs a command',
  ltrace: 'runs a command',
  fakeroot: 'runs a command',
  'systemd-run': 'runs a command',
  'start-stop-daemon': 'runs a command',
  expect: 'runs a script',
  tmux: 'runs command strings',
  screen: 'runs commands',
  xterm: 'runs a command',
};

/** Interpreters given code on the command line (`python3 -c`, `perl -e`, `node -e`): the code is opaque. */
const INLINE_CODE: [RegExp, string[]][] = [
  [/^python[0-9.]*$/, ['-c']],
  [/^(perl|ruby|lua[0-9.]*|osascript)$/, ['-e', '-E']],
  [/^(node|nodejs|bun)$/, ['-e', '--eval', '-p', '--print']],
  [/^php$/, ['-r']],
];

function inlineCode(name: string, argv: string[]): string | undefined {
  for (const [re, flags] of INLINE_CODE) {
    if (!re.test(name)) continue;
    if (argv.slice(1).some((a) => flags.includes(a) || flags.some((f) => f.length === 2 && a.startsWith('-') && !a.startsWith('--') && a.includes(f[1]))))
      return 'runs code given on the command line';
  }
  return undefined;
}
