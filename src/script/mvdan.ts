/**
 * mvdan-sh (GopherJS build of mvdan.cc/sh), the parser of record. Loaded once per process, lazily,
 * because it costs ~75 ms and the gate-sh hot path must not pay for it; compiled with the build's code
 * cache when there is one (src/script/code-cache.ts).
 * Its nodes are Go structs seen through GopherJS: fields are properties, positions are objects with
 * Offset() (UTF-8 bytes), Line() and Col(). Errors are Go error objects, not JS Errors.
 */
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cacheData, runCommonJs } from './code-cache.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type MvNode = any;

interface MvSyntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): MvNode };
  KeepComments(on: boolean): unknown;
  Variant(lang: unknown): unknown;
  LangBash: unknown;
}

let syntaxCache: MvSyntax | undefined;
function syntax(): MvSyntax {
  if (!syntaxCache) syntaxCache = (loadMvdan() as { syntax: MvSyntax }).syntax;
  return syntaxCache;
}

/** The build's code cache for mvdan-sh (scripts/parser-code-cache.cjs): dist/cjs-src/, from dist/src/script/
 * and from the daemon's bundle in dist/cjs-src/daemon/ alike. */
const MVDAN_CACHE = fileURLToPath(new URL('../../cjs-src/mvdan-sh.v8cache', import.meta.url));

/** mvdan-sh as require() gives it, compiled with the build's code cache when it was made from this very
 * file (size, mtime, inode); otherwise required as usual. */
function loadMvdan(): unknown {
  const require = createRequire(import.meta.url);
  const file = require.resolve('mvdan-sh');
  try {
    const st = statSync(file);
    const cached = cacheData(MVDAN_CACHE, `${st.size}:${Math.trunc(st.mtimeMs)}:${st.ino}`);
    if (cached) return runCommonJs(file, readFileSync(file, 'utf8'), cached);
  } catch {
    // no usable cache: the ordinary require below
  }
  return require(file);
}

/** BinaryCmd operators (mvdan's token numbers, derived by parsing each operator once). */
export const BIN_OP: Record<number, '&&' | '||' | '|' | '|&'> = { 10: '&&', 11: '||', 12: '|', 13: '|&' };
/** Redirect operators that feed a here-document or here-string (no file is opened). */
export const REDIR_HEREDOC = new Set([61, 62]); // <<  <<-
export const REDIR_HERESTRING = 63; // <<<
/** Redirect operators that open a file for writing (`>&` only when its word is not a descriptor). */
export const REDIR_WRITE: Record<number, string> = { 54: '>', 55: '>>', 57: '<>', 59: '>&', 60: '>|', 64: '&>', 65: '&>>' };
export const REDIR_DUP_OUT = 59; // >&

export type ParseResult = { ok: true; file: MvNode } | { ok: false; error: string };

/**
 * Parse bash source; never throws (Go errors, RangeError from deep nesting, anything else → error text).
 * The File returned is GopherJS's internal Go object, not the JS wrapper: reading a field of the
 * wrapper deep-copies the subtree below it (~0.1 ms per statement), the internal object costs nothing.
 * So fields hold Go values: slices (use `list`), byte strings (use `str`), typed nil (use `nil`).
 */
export function parseBash(src: string): ParseResult {
  try {
    const file = parser().Parse(src, '');
    return { ok: true, file: file.__internal_object__ ?? file };
  } catch (e) {
    parserCache = undefined; // a parse that died half-way (RangeError) may leave the parser inconsistent
    return { ok: false, error: errorText(e) };
  }
}

// One parser, reused: Parse resets it, and creating one costs ~0.2 ms (a tenth of a typical analysis).
let parserCache: { Parse(src: string, name: string): MvNode } | undefined;
function parser(): { Parse(src: string, name: string): MvNode } {
  if (!parserCache) {
    const sx = syntax();
    parserCache = sx.NewParser(sx.KeepComments(true), sx.Variant(sx.LangBash));
  }
  return parserCache;
}

export function errorText(e: unknown): string {
  if (e instanceof RangeError) return 'nesting too deep for the parser';
  const err = e as { Error?: () => string; message?: string };
  if (err && typeof err.Error === 'function') return String(err.Error());
  if (err && typeof err.message === 'string') return err.message;
  return String(e);
}

/** A Go slice as a JS array. */
export function list(slice: MvNode): MvNode[] {
  if (nil(slice)) return [];
  return slice.$array.slice(slice.$offset, slice.$offset + slice.$length);
}

/** A typed nil pointer, a nil interface, or nothing. */
export function nil(x: MvNode): boolean {
  return x === null || x === undefined || !x.constructor || x.constructor.nil === x || typeof x.constructor.string !== 'string';
}

/** A Go string (UTF-8 bytes, one per char) as a JS string. */
export function str(s: string): string {
  return /[\x80-\xff]/.test(s) ? Buffer.from(s, 'latin1').toString('utf8') : s;
}

/** The node's Go type name without the package: "CallExpr", "Lit", ... */
export function nodeType(n: MvNode): string {
  const t: string = n.constructor.string;
  return t.slice(t.lastIndexOf('.') + 1);
}

/** "line:col" of a node's start, for reasons. */
export function at(n: MvNode): string {
  const p = n.Pos();
  return `${p.Line()}:${p.Col()}`;
}

/** Byte offsets [start, end) of a node in the source. */
export function span(n: MvNode): [number, number] {
  return [n.Pos().Offset(), n.End().Offset()];
}

/** True when a Pos is set (Go's Pos.IsValid). */
export function validPos(p: MvNode): boolean {
  return p && p.lineCol > 0;
}
