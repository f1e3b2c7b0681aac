/**
 * Option grammars of the wrappers gate-sh sees through: where each one's inner command starts.
 * `start: null` means the wrapper runs nothing we can see (or nothing at all, like `command -v`).
 */

import type { Hidden, OpaqueKind } from './types.js';
import { basename } from 'node:path';
import { inProcessStart } from './in-process.js';

/** Where the inner command starts, or why it cannot be seen; `more`: further commands (find -exec). */
export type Step = { start: number | null; opaque?: Hidden; more?: string[][] };

interface Grammar {
  /** Short options that take a value (`-u NAME` or `-uNAME`). */
  shortArg?: string;
  /** Long options that take a value (`--user NAME` or `--user=NAME`). */
  longArg?: string[];
  /** Options after which nothing we can see runs, with the kind and reason (`-S` for env). */
  opaqueOpts?: Record<string, [OpaqueKind, string]>;
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
        if (g.opaqueOpts && Object.hasOwn(g.opaqueOpts, name)) return { start: null, opaque: hidden(g.opaqueOpts[name]) };
        if (g.noRun?.split(' ').includes(name)) return { start: null };
        if (g.longArg?.includes(name) && !a.includes('=')) i++;
        continue;
      }
      if (a.startsWith('-') && a.length > 1) {
        if (g.numericOpt && /^-\d+$/.test(a)) continue;
        for (let k = 1; k < a.length; k++) {
          const ch = '-' + a[k];
          if (g.opaqueOpts && Object.hasOwn(g.opaqueOpts, ch)) return { start: null, opaque: hidden(g.opaqueOpts[ch]) };
          if (g.noRun?.split(' ').includes(ch)) return { start: null };
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

const hidden = ([kind, text]: [OpaqueKind, string]): Hidden => ({ kind, text });

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
  // -i[R], -e[EOF], -l[N] take their value only when attached
  const s = optionGrammar({
    shortArg: 'IEdLnPsa',
    longArg: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--max-lines', '--process-slot-var'],
  })(argv);
  // xargs with no command runs echo; its arguments come from stdin (not visible here).
  if (s.start === null) return { start: null, more: [['echo']] };
  return s;
}

export const GRAMMARS: Record<string, (argv: string[]) => Step> = {
  env: optionGrammar({
    shortArg: 'uCa',
    longArg: ['--unset', '--chdir', '--argv0'],
    opaqueOpts: { '-S': ['command-string', 'split-string (-S) command is opaque'], '--split-string': ['command-string', 'split-string command is opaque'] },
    assignments: true,
    dashOption: true,
  }),
  timeout: optionGrammar({ shortArg: 'ks', longArg: ['--kill-after', '--signal'], positional: 1 }),
  nice: optionGrammar({ shortArg: 'n', longArg: ['--adjustment'], numericOpt: true }),
  nohup: optionGrammar({}),
  stdbuf: optionGrammar({ shortArg: 'ioe', longArg: ['--input', '--output', '--error'] }),
  time: optionGrammar({ shortArg: 'fo', longArg: ['--format', '--output'] }),
  // scheduling wrappers: they exec their command in place, as nice does (the exec gate sees that exec); with
  // -p they act on a running process and run nothing
  taskset: optionGrammar({ positional: 1, noRun: '-p --pid -h --help -V --version' }),
  ionice: optionGrammar({ shortArg: 'cn', longArg: ['--class', '--classdata'], noRun: '-p --pid -P --pgid -u --uid -h --help -V --version' }),
  chrt: optionGrammar({
    shortArg: 'TPD',
    longArg: ['--sched-runtime', '--sched-period', '--sched-deadline'],
    positional: 1,
    noRun: '-p --pid -m --max -h --help -V --version',
  }),
  command: optionGrammar({ noRun: '-v -V' }),
  exec: optionGrammar({ shortArg: 'a' }),
  builtin: optionGrammar({}),
  sudo: optionGrammar({
    shortArg: 'CDghprRtTUu',
    longArg: ['--close-from', '--chdir', '--chroot', '--group', '--host', '--prompt', '--role', '--type', '--command-timeout', '--other-user', '--user'],
    opaqueOpts: {
      '-s': ['shell', 'runs a shell (-s)'],
      '--shell': ['shell', 'runs a shell'],
      '-i': ['shell', 'runs a login shell (-i)'],
      '--login': ['shell', 'runs a login shell'],
      '-e': ['edits-files', 'edits files (sudoedit)'],
      '--edit': ['edits-files', 'edits files (sudoedit)'],
    },
    noRun: '-l --list -v --validate -k -K --reset-timestamp --remove-timestamp -V --version -h --help',
    assignments: true,
  }),
  doas: optionGrammar({ shortArg: 'uC', opaqueOpts: { '-s': ['shell', 'runs a shell (-s)'] }, noRun: '-L' }),
  xargs: xargsStep,
  find: findExec,
  // the loader run as a program and multi-call binaries run their command in process (src/script/in-process.ts)
  ...Object.fromEntries(
    ['ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1', 'ld-linux.so.2', 'ld.so', 'ld-musl-x86_64.so.1', 'busybox', 'toybox'].map((n) => [n, inProcessStep]),
  ),
};

/** Shell applets of busybox/toybox (hush and msh are busybox's own shells, unknown to SHELL_NAMES). */
const MULTI_CALL_SHELLS = new Set(['sh', 'ash', 'hush', 'msh', 'bash', 'dash', 'ksh', 'mksh', 'zsh']);

function inProcessStep(argv: string[]): Step {
  const start = inProcessStart(argv);
  if (!['busybox', 'toybox'].includes(basename(argv[0]))) return { start };
  // A multi-call shell may run its applets in process, without an exec the exec gate would see: it stays
  // opaque (as busybox was before it was seen through), while its script is still parsed for what it names.
  if (start === null) return { start, opaque: { kind: 'shell', text: 'runs applets and shells' } };
  if (MULTI_CALL_SHELLS.has(basename(argv[start])))
    return { start, opaque: { kind: 'shell', text: `runs a shell (${argv[start]}) whose applets run in process, unseen by the exec gate` } };
  return { start };
}

