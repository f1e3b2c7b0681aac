/**
 * `node /usr/bin/npm test` is how the kernel runs `/usr/bin/npm test` (`#!/usr/bin/env node`): decided as
 * the script it runs, so a rule about `npm test` covers its interpreter's exec too. Only for a
 * script in a folder only root writes, whose `#!` line names this very interpreter: then running it through
 * the interpreter runs exactly what running the script would. Pure: the caller reads the `#!` line.
 */
import { SYSTEM_BIN } from './exec-command.js';

export const INTERPRETERS: ReadonlySet<string> = new Set(['node', 'nodejs', 'python3', 'python', 'perl', 'ruby', 'bash', 'sh']);

/** `[script, args...]` when `program argv[1..]` is an interpreter running a system script of its own kind. */
export function scriptRunByInterpreter(program: string, argv: readonly string[], shebangOf: (path: string) => string | null): string[] | null {
  const interp = program.slice(program.lastIndexOf('/') + 1);
  const path = argv[1];
  if (!INTERPRETERS.has(interp) || !path?.startsWith('/')) return null;
  if (!SYSTEM_BIN.has(path.slice(0, path.lastIndexOf('/')))) return null;
  const line = shebangOf(path);
  if (line === null) return null;
  const words = line.trim().split(/\s+/);
  // `#!/usr/bin/env node` or `#!/usr/bin/node` (no options: they would change what runs)
  const named = words[0]?.endsWith('/env') && words.length === 2 ? words[1] : words.length === 1 ? words[0]?.slice(words[0].lastIndexOf('/') + 1) : undefined;
  return named === interp ? [path, ...argv.slice(2)] : null;
}

/** How deep the kernel follows interpreters that are scripts themselves (fs/exec.c: more is ELOOP). */
export const MAX_SCRIPT_DEPTH = 5;
/** How much of a file the kernel reads for its `#!` line (BINPRM_BUF_SIZE). */
export const SCRIPT_HEAD_BYTES = 256;

/** A `#!` line as the kernel reads it: the interpreter and its one optional argument. */
export interface ScriptLine {
  interpreter: string;
  arg?: string;
}

const isSpaceTab = (b: number | undefined) => b === 0x20 || b === 0x09;
const isTerminator = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0;

/**
 * The `#!` line of a file's first bytes as the kernel reads it (fs/binfmt_script.c): the interpreter name
 * ends at a space, tab or NUL; what follows, trimmed, is one argument (spaces and all), cut at a NUL; a line
 * longer than the 256 bytes read is cut there, unless that would cut the interpreter name (then the kernel
 * refuses it). null: not a script the kernel runs. 'undecodable': a script whose interpreter or argument
 * is not UTF-8 text (decided by the strictest reading: src/decide/intercepted.ts).
 */
export function parseShebang(head: Uint8Array): ScriptLine | null | 'undecodable' {
  const buf = head.subarray(0, SCRIPT_HEAD_BYTES);
  if (buf[0] !== 0x23 || buf[1] !== 0x21) return null;
  let end = buf.indexOf(0x0a);
  if (end < 0) {
    let first = 2;
    while (first < buf.length && isSpaceTab(buf[first])) first++;
    if (first >= buf.length) return null;
    let t = first;
    while (t < buf.length && !isTerminator(buf[t])) t++;
    // (the kernel's buffer is 256 bytes with a NUL at its end: a name running to it is truncated)
    if (t >= buf.length && buf.length >= SCRIPT_HEAD_BYTES) return null;
    end = buf.length >= SCRIPT_HEAD_BYTES ? SCRIPT_HEAD_BYTES - 1 : buf.length;
  }
  while (end > 2 && isSpaceTab(buf[end - 1])) end--;
  let name = 2;
  while (name < end && isSpaceTab(buf[name])) name++;
  if (name >= end) return null;
  let sep = name;
  while (sep < end && !isTerminator(buf[sep])) sep++;
  const decode = (b: Uint8Array): string | null => {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(b);
    } catch {
      return null;
    }
  };
  const interpreter = decode(buf.subarray(name, sep));
  if (interpreter === null) return 'undecodable';
  if (sep >= end || buf[sep] === 0) return { interpreter };
  let a = sep;
  while (a < end && isSpaceTab(buf[a])) a++;
  if (a >= end) return { interpreter };
  const nul = buf.subarray(a, end).indexOf(0);
  const arg = decode(buf.subarray(a, nul < 0 ? end : a + nul));
  if (arg === null) return 'undecodable';
  return arg === '' ? { interpreter } : { interpreter, arg };
}

/** The program the kernel runs for an exec of a `#!` script, after every level of interpreter. */
export interface KernelCommand {
  /** where the final interpreter lies, as the process names it (absolute) */
  program: string;
  /** its argv as the kernel builds it: [interpreter, arg?, script, ...the exec's argv[1..]] at each level */
  argv: string[];
  /** the scripts on the way, outermost first, as the process names them (absolute) */
  scripts: string[];
  /** the rule name whose program has the same bytes as the final interpreter (program-identity.ts) */
  knownAs?: string;
}

/**
 * What the kernel runs for `program argv` when the file is a `#!` script: its interpreter with the
 * interpreter's argument, the script's path and the exec's arguments, recursively (the interpreter may be a
 * script too; `#!/usr/bin/env X` is `env` running X, decided as env's inner command). `headOf(path)` gives a
 * file's first bytes as the process sees them (null: unreadable, or not there); paths are made absolute
 * against `cwd`, as the kernel opens them. null: not a script. 'unreadable': a script whose `#!` line cannot
 * be read exactly (not UTF-8, interpreters nested deeper than the kernel goes). Pure but for `headOf`.
 */
export function kernelCommand(
  program: string,
  argv: readonly string[],
  cwd: string,
  headOf: (path: string) => Uint8Array | null,
): KernelCommand | null | 'unreadable' {
  const scripts: string[] = [];
  let file = program;
  let args: string[] = [...argv];
  // the name the kernel puts in argv for the file it opens next: the exec's path, then each interpreter as written
  let named = program;
  for (let depth = 0; ; depth++) {
    const head = headOf(file);
    const line = head ? parseShebang(head) : null;
    if (line === 'undecodable') return 'unreadable';
    if (line === null) return depth === 0 ? null : { program: file, argv: args, scripts };
    if (depth >= MAX_SCRIPT_DEPTH) return 'unreadable';
    scripts.push(file);
    // the kernel drops argv[0] and puts the interpreter, its argument and the script's path in front
    args = [line.interpreter, ...(line.arg !== undefined ? [line.arg] : []), named, ...args.slice(1)];
    named = line.interpreter;
    file = line.interpreter.startsWith('/') ? line.interpreter : `${cwd.replace(/\/+$/, '')}/${line.interpreter}`;
  }
}
