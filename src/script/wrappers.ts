/**
 * Wrappers: programs that run another program given in their own argv. Each is seen through with its
 * own option grammar, yielding the inner command(s), outermost first. Programs that run a command
 * string or a script we cannot see are marked opaque (never auto-allowed).
 * Pure: a bash -c script is analysed by the `analyze` callback the caller passes in.
 */
import { basename } from 'node:path';
import type { ScriptAnalysis, Unwrapped } from './types.js';
import { GRAMMARS } from './wrapper-grammars.js';
import { opaqueReason } from './opaque.js';

export type ScriptAnalyzer = (script: string) => ScriptAnalysis;

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
    const grammar = Object.hasOwn(GRAMMARS, name) ? GRAMMARS[name] : undefined;
    if (grammar) {
      const step = grammar(cur);
      if (step.more) for (const m of step.more) pushUnwrapped(inner, m, analyze, depth, (o) => (opaque ??= o));
      if (step.opaque) opaque ??= `${name}: ${step.opaque}`;
      if (step.start === null || step.start >= cur.length) break;
      cur = cur.slice(step.start);
      inner.push(cur);
      continue;
    }
    const why = opaqueReason(name, cur);
    if (why) opaque ??= why;
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
