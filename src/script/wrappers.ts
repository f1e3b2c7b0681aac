/**
 * Wrappers: programs that run another program given in their own argv. Each is seen through with its
 * own option grammar, yielding the inner command(s), outermost first. Programs that run a command
 * string or a script we cannot see are marked opaque (never auto-allowed).
 * Pure: a bash -c script is analysed by the `analyze` callback the caller passes in.
 */
import { basename } from 'node:path';
import type { Hidden, OpaqueKind, ScriptAnalysis, Unwrapped } from './types.js';
import { GRAMMARS } from './wrapper-grammars.js';
import { opaqueProgram } from './opaque.js';
import { elsewhereOf } from './runs-elsewhere.js';

export type ScriptAnalyzer = (script: string) => ScriptAnalysis;

const MAX_DEPTH = 8;

/** A word of a command known only at run time, kept in its place while a wrapper is unwrapped (a NUL
 * cannot be in a real argument). */
export const RUN_TIME_WORD = '\u0000run-time word';

export function unwrapWith(argv: string[], analyze: ScriptAnalyzer, depth = 0): Unwrapped {
  const inner: string[][] = [];
  let hidden: Hidden | undefined;
  let cur = argv;
  for (let guard = 0; cur.length > 0 && guard < 64; guard++) {
    if (depth > MAX_DEPTH) return unwrapped(inner, { kind: 'too-deep', text: 'wrappers nested too deeply' });
    if (cur[0] === RUN_TIME_WORD) break; // a program named at run time: the exec gate sees which
    const name = basename(cur[0]);
    const shell = SHELL_NAMES.has(name) ? shellStep(cur, analyze, depth) : null;
    if (shell) {
      inner.push(...shell.inner);
      return unwrapped(inner, hidden ?? shell.hidden);
    }
    // tmux, ssh, docker exec, systemd-run, at...: what they hand elsewhere is decided as run here
    const away = unwrapElsewhere(cur, analyze, depth);
    if (away) {
      inner.push(...away.inner);
      hidden ??= away.hidden ?? opaqueProgram(name, cur);
      break;
    }
    const grammar = Object.hasOwn(GRAMMARS, name) ? GRAMMARS[name] : undefined;
    if (grammar) {
      const step = grammar(cur);
      if (step.more) for (const m of step.more) pushUnwrapped(inner, m, analyze, depth, (h) => (hidden ??= h));
      if (step.opaque) hidden ??= { kind: step.opaque.kind, text: `${name}: ${step.opaque.text}` };
      if (step.start === null || step.start >= cur.length) break;
      cur = cur.slice(step.start);
      inner.push(cur);
      continue;
    }
    hidden ??= opaqueProgram(name, cur);
    break;
  }
  return unwrapped(inner, hidden);
}

/**
 * The commands a program that runs commands elsewhere (src/script/runs-elsewhere.ts) hands over, unwrapped
 * as the run's own; `hidden` when some of it cannot be read. null for every other program.
 */
export function unwrapElsewhere(argv: string[], analyze: ScriptAnalyzer, depth = 0): { inner: string[][]; hidden?: Hidden } | null {
  const e = elsewhereOf(argv);
  if (!e) return null;
  const inner: string[][] = [];
  let hidden = e.hidden;
  const setHidden = (h: Hidden) => (hidden ??= h);
  for (const a of e.argvs) pushUnwrapped(inner, a, analyze, depth, setHidden);
  for (const text of e.scripts) {
    const s = shellStep(['sh', '-c', text], analyze, depth + 1);
    inner.push(...s.inner);
    if (s.hidden) setHidden({ kind: s.hidden.kind, text: `${basename(argv[0])}: ${s.hidden.text.replace(/^sh -c /, 'its command ')}` });
  }
  return hidden === undefined ? { inner } : { inner, hidden };
}

/** An Unwrapped with `opaque` and `opaqueKind` set together, or neither. */
export function unwrapped(inner: string[][], hidden: Hidden | undefined): Unwrapped {
  return hidden === undefined ? { inner } : { inner, opaque: hidden.text, opaqueKind: hidden.kind };
}

/** The hidden execution of an Unwrapped or Subcommand (the text decides presence: never weaker). */
export function hiddenOf(x: { opaque?: string; opaqueKind?: OpaqueKind }): Hidden | undefined {
  return x.opaque ? { kind: x.opaqueKind ?? 'command-string', text: x.opaque } : undefined;
}

function pushUnwrapped(inner: string[][], argv: string[], analyze: ScriptAnalyzer, depth: number, setHidden: (h: Hidden) => void): void {
  inner.push(argv);
  const u = unwrapWith(argv, analyze, depth + 1);
  inner.push(...u.inner);
  const h = hiddenOf(u);
  if (h) setHidden(h);
}

// ---- shells: bash|sh|zsh|dash|ksh [options] -c 'script' [$0 args...] ----

const SHELL_NAMES = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);
const SHELL_OPT_ARG = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);

interface ShellStep {
  inner: string[][];
  hidden?: Hidden;
}

function shellStep(argv: string[], analyze: ScriptAnalyzer, depth: number): ShellStep {
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
    if (stdin || i >= argv.length) return { inner: [], hidden: { kind: 'stdin-script', text: `${name} reads commands from stdin` } };
    return { inner: [], hidden: { kind: 'script-file', text: `${name} runs script file ${argv[i]}` } };
  }
  if (i >= argv.length) return { inner: [], hidden: { kind: 'command-string', text: `${name} -c without a script` } };
  if (argv[i] === RUN_TIME_WORD) return { inner: [], hidden: { kind: 'command-string', text: `${name} -c with a script known only at run time` } };
  if (depth > MAX_DEPTH) return { inner: [], hidden: { kind: 'too-deep', text: 'shells nested too deeply' } };
  const a = analyze(argv[i]);
  const inner: string[][] = [];
  let hidden: Hidden | undefined;
  const cmds = a.kind === 'plain' ? a.commands : a.literalCommands;
  for (const sc of cmds) {
    if (sc.argv.length > 0) inner.push(sc.argv);
    inner.push(...sc.inner);
    hidden ??= hiddenOf(sc);
  }
  if (a.kind === 'complex') hidden = { kind: 'command-string', text: `${name} -c script is complex: ${a.reasons.join('; ')}` };
  return hidden === undefined ? { inner } : { inner, hidden };
}
