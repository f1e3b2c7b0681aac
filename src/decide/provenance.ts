/**
 * Where an intercepted exec's command came from (docs/exec-gate.md): the model's text, or a program running its own
 * files. Pure: the daemon reads the exec'ing process's ancestry from /proc (src/daemon/provenance.ts) and
 * this module reads it.
 *
 *   model    the command is the model's text: the run's shell, `eval`/`trap` strings, nested `bash -c`
 *            strings, inline interpreter code (`python -c`, `node -e`, `perl -e`, a heredoc or stdin fed to
 *            an interpreter), the commands of exec-ing wrappers (env, timeout, xargs, find -exec, ...)
 *            → the rules, then the heuristics; an allow rule may take it out of the sandbox
 *   program  a program running its own files made it: make recipes, `./configure` and `sh ./configure`, a
 *            script file run by sh/bash/python/node, npm scripts, test runners, compilers
 *            → the rules only (forbidden and prompt rules hold); unmatched runs in place; an allow rule
 *            never takes it out of the sandbox
 *   unsure   the ancestry could not be read to the run's gate-sh → the stricter of the two: the heuristics
 *            apply and nothing leaves the sandbox by a rule
 *
 * Trust: a process's command line is what it says of itself, and a sandboxed process can rewrite its own.
 * That is why a program's child is decided by the rules alone only where the heuristics would decide code
 * that already runs in the sandbox (code that could delete files with a system call as well as with `rm`),
 * and why the reading that lets a command leave the sandbox (`widen`) needs every ancestor up to the
 * run's gate-sh to carry the model's text: a program pretending to be inline code gains at most what every
 * exec had before this module existed.
 */
import { basenameOf } from './wrapper-inner.js';
import { PROVENANCE_PLUMBING, type ReuseScope } from '../protocol/index.js';

/** One process of the ancestry: what /proc says it runs (exe: the kernel's link, '' when unreadable). */
export interface Ancestor {
  exe: string;
  argv: string[];
  /** who it is (pid, start time, parent), when the reader knew: names the process a scoped reuse holds below */
  id?: ReuseScope;
  /** its parent is gate-sh's plumbing, yet it is not the first process that plumbing started (another of the
   * plumbing's children that is not plumbing started before it), or that could not be read: a process the
   * plumbing adopted as an orphan (bubblewrap's init and the supervisor, a child subreaper, take every orphan
   * of the run), whose own origin /proc no longer shows. Set by the reader only where the parent is plumbing. */
  adopted?: boolean;
}

/**
 * The exec'ing process first, then its parent, up to the process below the run's gate-sh (`complete`), or
 * as far as it could be read (not complete: the run's gate-sh was not found above it).
 */
export interface Ancestry {
  chain: Ancestor[];
  complete: boolean;
}

export interface Provenance {
  /** whose text the command is, for the heuristics */
  kind: 'model' | 'program' | 'unsure';
  /** an allow rule may take it out of the sandbox: every ancestor carries the model's text */
  widen: boolean;
  /** the program running its own files that made it (for the audit log and `gate explain`) */
  by?: string[];
  /** that program's process, when it is an ancestor of the exec'ing process (not that process itself): every
   * exec made below it, through no plumbing, is decided the same way while it runs the same image, so a Run
   * that reads nothing else may be reused there (src/decide/reuse.ts) */
  scope?: ReuseScope;
}

export const UNSURE: Provenance = { kind: 'unsure', widen: false };

/** gate-sh's own plumbing between the run's gate-sh and its command: transparent. The supervisor is not
 * dumpable, so its exe cannot be read (''). */
const PLUMBING = new Set<string>([...PROVENANCE_PLUMBING, '']);

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'ksh93', 'mksh', 'ash', 'yash', 'posh', 'rbash']);
/** Programs that run commands named on their command line: their children are their caller's text. */
const WRAPPERS = new Set([
  'env', 'timeout', 'nice', 'nohup', 'stdbuf', 'time', 'command', 'ionice', 'xargs', 'find', 'parallel', 'sudo', 'doas',
  'su', 'runuser', 'setsid', 'taskset', 'chrt', 'flock', 'watch', 'strace', 'ltrace', 'unbuffer', 'script', 'chroot',
  'nsenter', 'unshare', 'setpriv', 'prlimit', 'fakeroot', 'systemd-run', 'catchsegv', 'valgrind', 'perf', 'entr',
  'tmux', 'screen', 'ssh', 'sg', 'newgrp', 'pkexec', 'start-stop-daemon', 'rlwrap', 'faketime', 'firejail', 'bwrap',
  'expect', 'xterm', 'busybox', 'toybox', 'ld.so', 'ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1',
]);
/** Interpreters whose program text is given on the command line unless a file is named (`-f`). */
const TEXT_PROGRAMS = new Set(['awk', 'gawk', 'mawk', 'nawk', 'sed', 'jq']);

/**
 * A file that is no file of a program's own but a pipe or descriptor its caller handed it: `bash /dev/stdin`,
 * `python3 /dev/fd/0`, process substitution's `/dev/fd/63`, `/proc/self/fd/3`. A script read from one is the
 * caller's text, as code read from stdin (`python3 -`) is.
 */
export function anonymousFile(w: string): boolean {
  return /^\/dev\/(stdin|fd\/\d+)$/.test(w) || /^\/proc\/(self|thread-self|\d+)\/fd\/\d+$/.test(w);
}

/**
 * A program that runs text its caller gave it inline besides (or instead of) its own files, so that what its
 * children run may be the model's: a makefile from stdin or a descriptor (`make -f - <<EOF`, `make -f
 * <(...)`) or `make --eval`, npm's exec (`npx -c 'cmd'`, `npm exec -- cmd`, `npm x`: npm replaces its command line
 * with the title "npm exec", so its arguments cannot be read), any operand that is a descriptor or stdin.
 * Its children get the heuristics, never the widening (it may as well run its own files: the project's
 * Makefile beside --eval, a package's scripts).
 */
export function readsInlineText(a: Ancestor): boolean {
  const argv = a.argv;
  if (/^npm (exec|x)(\s|$)/.test(argv[0] ?? '') || /^npx(\s|$)/.test(argv[0] ?? '')) return true;
  const name = processName(a);
  if (family(name) === 'node') {
    const script = argv.slice(1).find((w) => !w.startsWith('-'));
    const base = basenameOf(script ?? '');
    if (base === 'npx' || (base === 'npm' && ['exec', 'x'].includes(argv[argv.indexOf(script!) + 1] ?? ''))) return true;
  }
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i];
    if (anonymousFile(w) || anonymousFile(w.replace(/^(-[a-zA-Z]*f|--file=|--makefile=)/, ''))) return true;
    if (/^make$|^gmake$/.test(name)) {
      if (w === '--eval' || w.startsWith('--eval=') || /^-[a-zA-Z]*E/.test(w)) return true;
      if (['-f', '--file', '--makefile'].includes(w) && (argv[i + 1] === '-' || anonymousFile(argv[i + 1] ?? ''))) return true;
      if (w === '-f-' || w === '--file=-' || w === '--makefile=-') return true;
    }
  }
  return false;
}

/** Options that take the next word as their value, per interpreter (not a script operand). */
const VALUE_OPTIONS: Record<string, Set<string>> = {
  python: new Set(['-W', '-X', '-Q']),
  node: new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type', '--title']),
  perl: new Set(['-I', '-M', '-m']),
  ruby: new Set(['-I', '-r', '-C', '-E']),
  shell: new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']),
};

function family(name: string): 'python' | 'node' | 'perl' | 'ruby' | 'php' | 'lua' | 'tcl' | null {
  if (/^(python[0-9.]*|pypy[0-9.]*)$/.test(name)) return 'python';
  if (/^(node|nodejs|bun|deno)$/.test(name)) return 'node';
  if (/^perl[0-9.]*$/.test(name)) return 'perl';
  if (/^ruby[0-9.]*$/.test(name)) return 'ruby';
  if (/^php[0-9.]*$/.test(name)) return 'php';
  if (/^lua(jit)?[0-9.]*$/.test(name)) return 'lua';
  if (/^(tclsh|wish)[0-9.]*$/.test(name)) return 'tcl';
  return null;
}

/** The name a process is decided by: its exe's, but a multi-call binary's applet by argv[0]. */
export function processName(a: Ancestor): string {
  const exe = basenameOf(a.exe);
  if ((exe === 'busybox' || exe === 'toybox') && a.argv[0] !== undefined) {
    const applet = basenameOf(a.argv[0]);
    return applet === exe && a.argv[1] !== undefined ? basenameOf(a.argv[1]) : applet;
  }
  return exe === '' ? basenameOf(a.argv[0] ?? '') : exe;
}

/**
 * Does this process run text its caller gave it (so its children are whatever its caller's are), rather
 * than its own files? Shells with `-c` or reading stdin, interpreters with inline code or stdin, wrappers.
 */
export function carriesCallersText(a: Ancestor): boolean {
  const name = processName(a);
  // `busybox sh -c ...`: the applet's own arguments
  const multi = basenameOf(a.argv[0] ?? '') === basenameOf(a.exe) && (name !== basenameOf(a.exe));
  const argv = multi ? a.argv.slice(1) : a.argv;
  if (WRAPPERS.has(name)) return true;
  if (TEXT_PROGRAMS.has(name)) {
    // (a program from a file: its own, unless the file is a pipe or descriptor its caller handed it)
    const from = argv.findIndex((w, i) => i > 0 && (w === '-f' || w.startsWith('--file') || /^-[^-]*f$/.test(w)));
    if (from < 0) return true;
    const file = argv[from].includes('=') ? argv[from].slice(argv[from].indexOf('=') + 1) : argv[from + 1] ?? '';
    return file === '-' || anonymousFile(file);
  }
  if (SHELLS.has(name)) return shellCarries(argv);
  const fam = family(name);
  return fam !== null && interpreterCarries(fam, name, argv);
}

/**
 * `[script, args...]` when `argv` is a shell running a script file (`sh ./configure --prefix=x`): decided as
 * that script is (`./configure --prefix=x`), so a rule about the script holds however it is started.
 */
export function scriptOfShell(argv: readonly string[]): string[] | null {
  const name = basenameOf(argv[0] ?? '');
  if (!SHELLS.has(name) || shellCarries(argv)) return null;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i];
    if (w.startsWith('--')) {
      if (VALUE_OPTIONS.shell.has(w)) i++;
      continue;
    }
    if (w.startsWith('-') || w.startsWith('+')) {
      if (VALUE_OPTIONS.shell.has(w) || /^[-+][a-zA-Z]*[oO]$/.test(w)) i++;
      continue;
    }
    return argv.slice(i);
  }
  return null;
}

function shellCarries(argv: readonly string[]): boolean {
  const takes = VALUE_OPTIONS.shell;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i];
    if (w === '--' || w === '-') return i + 1 >= argv.length || w === '-';
    if (w.startsWith('--')) {
      if (takes.has(w)) i++;
      continue;
    }
    if (w.startsWith('-') || w.startsWith('+')) {
      if (/^[-+][a-zA-Z]*[cs]/.test(w) && w[0] === '-') return true;
      if (takes.has(w) || /^[-+][a-zA-Z]*[oO]$/.test(w)) i++;
      continue;
    }
    return anonymousFile(w); // a script file: the shell runs its own file (a pipe handed to it: its caller's text)
  }
  return true; // no operand: commands from stdin
}

function interpreterCarries(fam: NonNullable<ReturnType<typeof family>>, name: string, argv: readonly string[]): boolean {
  const takes = VALUE_OPTIONS[fam] ?? new Set<string>();
  if (name === 'deno') return argv[1] === 'eval' || argv[1] === 'repl' || argv.length < 2;
  if (name === 'bun' && argv[1] !== undefined && !argv[1].startsWith('-') && argv[1] !== 'run') return false; // bun test, bun x, ...
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i];
    if (w === '-') return true;
    if (w === '--') return i + 1 >= argv.length || argv[i + 1] === '-';
    if (!w.startsWith('-')) return anonymousFile(w); // a script file (a pipe handed to it: its caller's text)
    switch (fam) {
      case 'python':
        if (/^-[a-zA-Z]*c/.test(w)) return true;
        if (/^-[a-zA-Z]*m/.test(w)) return false; // a module: its own files
        break;
      case 'node':
        if (['-e', '--eval', '-p', '--print', '-pe', '-ep'].includes(w) || w.startsWith('--eval=') || w.startsWith('--print=')) return true;
        break;
      case 'perl':
      case 'ruby':
      case 'lua':
        if (/^-[a-zA-Z]*[eE]/.test(w) && !w.startsWith('-I') && !w.startsWith('-M')) return true;
        break;
      case 'php':
        if (w === '-r' || w === '-R' || w === '-B' || w === '-E') return true;
        break;
      default:
        break;
    }
    if (takes.has(w)) i++;
  }
  return true; // no script operand: code from stdin (`python3 - <<EOF`, `node <<EOF`)
}

/**
 * A program that replaces itself (an exec without a fork: its parent is not a copy of it) by exactly the
 * command its own command line spells out (`runner --flag /usr/bin/touch touch /x` → `touch /x`) is doing
 * what a wrapper does: the command is its caller's text. A build tool forks for each command it runs, and a
 * recipe's command is not in make's command line.
 */
function replacesItselfWith(a: Ancestor, parent: Ancestor, child: readonly string[]): boolean {
  if (a.exe === parent.exe && a.argv.length === parent.argv.length && a.argv.every((w, i) => w === parent.argv[i])) return false;
  const names = new Set([basenameOf(child[0] ?? ''), basenameOf(child[1] ?? '')]);
  const args = child.slice(2);
  for (let j = 1; j < a.argv.length - args.length; j++) {
    if (!names.has(basenameOf(a.argv[j]))) continue;
    if (args.every((w, i) => a.argv[j + 1 + i] === w)) return true;
  }
  return false;
}

/** The words of a command line, for finding a child's program name in it (`npx rimraf x`, `watch 'rm x'`). */
function wordsOf(argv: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const a of argv) for (const w of a.split(/[^A-Za-z0-9_.+-]+/)) if (w !== '') out.add(w);
  return out;
}

/**
 * The provenance of an exec of `child` (its argv, program first) by the last process of `ancestry.chain`'s
 * first entry. Plumbing at the top (gate-launch, its supervisor, bubblewrap) is transparent; the first
 * process below it is the run's own command (its shell carries the model's text by definition: gate-sh
 * runs every script as `bash -c`). Below that, each process either carries its caller's text or is a
 * program running its own files, and everything under a program is the program's — except where the
 * child's program name is a word of that program's own command line, which the model wrote (`npx rimraf
 * x`, `git -c alias.x='!rm -rf y' x`): then the heuristics decide it too (never the sandbox's widening).
 */
export function provenanceOf(ancestry: Ancestry | null, child: readonly string[]): Provenance {
  // (`child`: the program's path, then the exec's whole argv, argv[0] included)
  if (!ancestry || ancestry.chain.length === 0) return UNSURE;
  // from the top down: the run's gate-sh's side first
  const down = [...ancestry.chain].reverse();
  let i = 0;
  // the whole chain's plumbing, also between segments (a nested gate-sh under make): never a program
  const plumbing = (a: Ancestor) => PLUMBING.has(basenameOf(a.exe));
  // neither the run's gate-sh nor any of gate-sh's plumbing above: what was read may not be the run's
  if (!ancestry.complete && !down.some(plumbing)) return UNSURE;
  while (i < down.length && plumbing(down[i])) i++;
  if (i >= down.length) return ancestry.complete ? { kind: 'model', widen: true } : UNSURE;
  // a process right below the plumbing stands for the run's own command only when the plumbing started it: an
  // orphan (a make recipe's `(cmd &)` once its shell exited) is adopted there too and would otherwise read as
  // the run's own shell, the model's text that an allow rule takes out of the sandbox
  if (down.some((a, k) => k > 0 && a.adopted === true && !plumbing(a) && plumbing(down[k - 1]))) return UNSURE;
  // the segment below the lowest plumbing decides the heuristics; every segment the widening
  let lowest = down.length - 1;
  while (lowest > i && !plumbing(down[lowest])) lowest--;
  const segmentTop = plumbing(down[lowest]) ? lowest + 1 : i;
  const last = down.length - 1;
  const programAt = (from: number): { program?: Ancestor; at?: number } => {
    for (let k = from; k < down.length; k++) {
      const a = down[k];
      if (plumbing(a)) continue;
      const top = k === from || plumbing(down[k - 1]);
      if (top && SHELLS.has(processName(a))) continue; // the run's own shell
      if (k === last && k > 0 && replacesItselfWith(a, down[k - 1], child)) continue; // a wrapper in deed
      if (!carriesCallersText(a)) return { program: a, at: k };
    }
    return {};
  };
  const whole = programAt(i);
  const low = segmentTop < down.length ? programAt(segmentTop) : {};
  const widen = ancestry.complete && whole.program === undefined;
  if (!low.program) return { kind: ancestry.complete || segmentTop > 0 ? 'model' : 'unsure', widen };
  const name = basenameOf(child[0] ?? '');
  if (name !== '' && wordsOf(low.program.argv.slice(1)).has(name)) return { kind: 'model', widen: false, by: low.program.argv };
  // the model's text handed to it inline (`make -f - <<EOF`, `npx -c 'cmd'`): heuristics too, never widened
  if (readsInlineText(low.program)) return { kind: 'model', widen: false, by: low.program.argv };
  // below it (not the exec'ing process itself, whose own exec may be a wrapper's in deed)
  const scope = low.at !== undefined && low.at < last && low.program.id ? { scope: low.program.id } : {};
  return { kind: 'program', widen: false, by: low.program.argv, ...scope };
}

/**
 * Whether a program's name alone makes it a program running its own files, whatever its argv and wherever it
 * runs (make, gcc, cc1, sed -f aside: no shell, interpreter, text program, wrapper or plumbing): then every
 * exec its forked children make, and theirs, is below a program running its own files. `names`: the program
 * as the exec names it and as /proc will show it (its real path); all must qualify.
 */
export function ownFilesByName(...names: string[]): boolean {
  return names.every((n) => {
    const name = basenameOf(n);
    return name !== '' && !PLUMBING.has(name) && !SHELLS.has(name) && !WRAPPERS.has(name) && !TEXT_PROGRAMS.has(name) && family(name) === null;
  });
}

/**
 * Whether every exec made below a new program — by its forked children and by theirs — is below a program
 * running its own files, so that no rule ever takes one of them out of the sandbox (`widen` is false for
 * each: provenanceOf finds that program above them, from the top down, whatever they run). `image`: the new
 * program as /proc will show it once exec'd; `ancestry`: the exec'ing process's, whose image it replaces.
 * Where this is true the LD_PRELOAD layer, which only escalates and says denials in the process, is left out
 * of those descendants (docs/exec-gate.md, "Below a program running its own files").
 */
export function belowProgram(ancestry: Ancestry | null, image: Omit<Ancestor, 'id'>): boolean {
  if (ancestry === null || ancestry.chain.length === 0) return false;
  const [self, ...above] = ancestry.chain;
  // a forked child of the new program, about to exec: a copy of it, below it
  const fork: Ancestor = { exe: image.exe, argv: image.argv };
  const p = provenanceOf({ chain: [fork, { ...image, id: self.id }, ...above], complete: ancestry.complete }, ['']);
  return p.kind === 'program' && !p.widen;
}

