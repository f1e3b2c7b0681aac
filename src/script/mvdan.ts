/**
 * mvdan-sh (GopherJS build of mvdan.cc/sh), the parser of record. Loaded once per process, lazily,
 * because it costs ~75 ms and the gate-sh hot path must not pay for it.
 * Its nodes are Go structs seen through GopherJS: fields are properties, positions are objects with
 * Offset() (UTF-8 bytes), Line() and Col(). Errors are Go error objects, not JS Errors.
 */
import { createRequire } from 'node:module';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type MvNode = any;

interface MvSyntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): MvNode };
  NodeType(n: MvNode): string;
  KeepComments(on: boolean): unknown;
  Variant(lang: unknown): unknown;
  LangBash: unknown;
}

let syntaxCache: MvSyntax | undefined;
function syntax(): MvSyntax {
  if (!syntaxCache) syntaxCache = (createRequire(import.meta.url)('mvdan-sh') as { syntax: MvSyntax }).syntax;
  return syntaxCache;
}

/** BinaryCmd operators (mvdan's token numbers, derived by parsing each operator once). */
export const BIN_OP: Record<number, '&&' | '||' | '|' | '|&'> = { 10: '&&', 11: '||', 12: '|', 13: '|&' };
/** Redirect operators that feed a here-document or here-string (no file is opened). */
export const REDIR_HEREDOC = new Set([61, 62]); // <<  <<-
export const REDIR_HERESTRING = 63; // <<<

export type ParseResult = { ok: true; file: MvNode } | { ok: false; error: string };

/** Parse bash source; never throws (Go errors, RangeError from deep nesting, anything else → error text). */
export function parseBash(src: string): ParseResult {
  try {
    const sx = syntax();
    const parser = sx.NewParser(sx.KeepComments(true), sx.Variant(sx.LangBash));
    return { ok: true, file: parser.Parse(src, '') };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}

export function errorText(e: unknown): string {
  if (e instanceof RangeError) return 'nesting too deep for the parser';
  const err = e as { Error?: () => string; message?: string };
  if (err && typeof err.Error === 'function') return String(err.Error());
  if (err && typeof err.message === 'string') return err.message;
  return String(e);
}

export function nodeType(n: MvNode): string {
  return syntax().NodeType(n);
}

/** "line:col" of a node's start, for reasons. */
export function at(n: MvNode): string {
  const p = n.Pos();
  return `${p.Line()}:${p.Col()}`;
}

/** True when a Pos is set (Go's Pos.IsValid: line > 0). */
export function validPos(p: MvNode): boolean {
  return p && p.Line() > 0;
}
