/**
 * gate-sh's script analysis: bash text → plain subcommands (with the list structure), or complex
 * (with reasons and every literal command found anywhere). Never throws.
 *
 * Plain needs all of: mvdan-sh parses it; the top level is only simple commands of literal words
 * joined by && || ; | |& and newlines (assignment prefixes allowed); bash-parser, asked separately,
 * sees the same commands with the same words. Everything else is complex.
 */
import { parseShellLcSingleCommandPrefix } from './codex-compat.js';
import { disagreementWithSecondParser } from './agreement.js';
import { errorText, parseBash } from './mvdan.js';
import type { AnalyzeOptions, ComplexScript, Hidden, OpaqueKind, ScriptAnalysis, Subcommand, Unwrapped } from './types.js';
import { HASH_IN_WORD, walkFile, type WalkHooks, type WalkMode } from './walk.js';
import { unwrapElsewhere, unwrapped, unwrapWith } from './wrappers.js';

export type { AnalyzeOptions, ComplexScript, ListOp, OpaqueKind, PlainScript, RedirectWrite, ScriptAnalysis, Subcommand } from './types.js';

/** Above this a script is complex without being parsed (mvdan costs ~50 ms per 32 KiB). */
export const DEFAULT_MAX_BYTES = 256 * 1024;
/** bash-parser is quadratic and ~0.2 ms per command: plain needs its agreement, so plain has a size cap. */
export const SECOND_OPINION_MAX_BYTES = 32 * 1024;
/** Nested scripts (bash -c '...', trap strings, heredoc-fed shells) deeper than this are complex. */
const MAX_NESTING = 8;

export function analyzeScript(script: string, opts: AnalyzeOptions = {}): ScriptAnalysis {
  try {
    return analyze(script, opts, 0);
  } catch (e) {
    return complex([`analysis failed: ${errorText(e)}`], []);
  }
}

/** Wrappers on a bare argv (exec-time use): what `env`, `sudo`, `bash -c`, `find -exec`... will run. */
export function unwrapCommand(argv: string[]): Unwrapped {
  try {
    return unwrapWith(argv, (s) => analyze(s, {}, 1));
  } catch (e) {
    return unwrapped([], { kind: 'analysis-failed', text: `analysis failed: ${errorText(e)}` });
  }
}

/** What a program that runs commands elsewhere (tmux, ssh, docker exec...) hands over; null for others. */
export function elsewhereCommand(argv: string[]): { inner: string[][]; hidden?: Hidden } | null {
  try {
    return unwrapElsewhere(argv, (s) => analyze(s, {}, 1));
  } catch (e) {
    return { inner: [], hidden: { kind: 'analysis-failed', text: `analysis failed: ${errorText(e)}` } };
  }
}

function analyze(script: string, opts: AnalyzeOptions, depth: number, retries = 0, mode: WalkMode = {}): ScriptAnalysis {
  if (typeof script !== 'string') return unread(['script is not a string']);
  const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const src = Buffer.from(script, 'utf8');
  if (src.length > max) return unread([`script larger than ${max} bytes`]);
  if (depth > MAX_NESTING) return unread(['scripts nested too deeply']);
  const bad = badText(script);
  if (bad) return unread([bad]);

  const parsed = parseBash(script);
  if (!parsed.ok) return unread([`parse error: ${parsed.error}`]);
  const hooks: WalkHooks = {
    unwrap: (argv) => unwrapWith(argv, (s) => analyze(s, opts, depth + 1)),
    scriptCommands: (s) => {
      const a = analyze(s, opts, depth + 1);
      return a.kind === 'plain' ? { commands: a.commands, complex: false } : { commands: a.literalCommands, complex: true };
    },
    sameShellScript: (s, sourced) => analyze(s, opts, depth + 1, 0, { sourced }),
    readSource: (path) => opts.readSource?.(path) ?? null,
  };
  const w = walkFile(parsed.file, src, hooks, mode);
  if (w.hashes.length > 0 && retries < 8) {
    // The parsers cut a word at a `#` that bash keeps (`"x"#$(rm y)`): read it again with that `#`
    // escaped, so the literal commands behind it are found too. Still complex: both parsers were wrong.
    const again = analyze(escapeAt(src, w.hashes), opts, depth, retries + 1, mode);
    const reasons = [...w.reasons.filter((r) => r.startsWith(HASH_IN_WORD)), ...(again.kind === 'complex' ? again.reasons : [])];
    // (escaping a `#` only joins text into a word: the second reading sees every dynamic name)
    const dynamic = again.kind === 'complex' && again.opaqueKinds.includes('dynamic-name');
    return complex(reasons, again.kind === 'complex' ? again.literalCommands : flatten(again.commands), dynamic);
  }
  if (w.reasons.length > 0) {
    const c = complex(w.reasons, flatten(w.literal), w.dynamicName);
    c.writes = w.writes;
    const prefix = parseShellLcSingleCommandPrefix(['bash', '-c', script]);
    if (prefix) c.heredocPrefix = prefix;
    return c;
  }
  if (w.commands.length === 0) return { kind: 'plain', commands: [], ops: [] };
  if (src.length > SECOND_OPINION_MAX_BYTES)
    return complex([`script larger than ${SECOND_OPINION_MAX_BYTES} bytes: too large for the second parser`], flatten(w.literal));
  const disagreement = disagreementWithSecondParser(w.commands, parsed.file, src, w.ansiC);
  if (disagreement) return complex([`parsers disagree: ${disagreement}`], flatten(w.literal));
  return { kind: 'plain', commands: w.commands, ops: w.ops };
}

/** Text bash would read differently from the parsers, or that cannot be bash input at all. */
function badText(script: string): string | null {
  if (script.includes('\0')) return 'NUL byte in script';
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(script)) return 'invalid UTF-16 (lone surrogate) in script';
  if (script.includes('\ufffd')) return 'invalid UTF-8 (replacement character) in script';
  // Parsers drop a \r before \n; bash keeps it in the word.
  if (script.includes('\r')) return 'carriage return in script';
  return null;
}

/** The source with a backslash inserted before each given byte offset. */
function escapeAt(src: Buffer, offsets: number[]): string {
  const parts: Buffer[] = [];
  let from = 0;
  for (const at of [...offsets].sort((a, b) => a - b)) {
    parts.push(src.subarray(from, at), Buffer.from('\\'));
    from = at;
  }
  parts.push(src.subarray(from));
  return Buffer.concat(parts).toString('utf8');
}

/** Literal commands plus, as entries of their own, every command their wrappers run. */
function flatten(found: Subcommand[]): Subcommand[] {
  const out: Subcommand[] = [];
  for (const s of found) {
    out.push(s);
    for (const argv of s.inner) out.push({ argv, assignments: [], inner: [], redirects: false });
  }
  return out;
}

/** A text that was not walked: complex, nothing known in it. */
function unread(reasons: string[]): ComplexScript {
  return { ...complex(reasons, []), unread: true };
}

/** `dynamicName`: the walk found a command whose name is only known at run time. */
function complex(reasons: string[], literalCommands: Subcommand[], dynamicName = false): ComplexScript {
  const kinds = new Set<OpaqueKind>(dynamicName ? ['dynamic-name'] : []);
  for (const c of literalCommands) if (c.opaqueKind) kinds.add(c.opaqueKind);
  return { kind: 'complex', reasons, literalCommands, opaqueKinds: [...kinds] };
}
