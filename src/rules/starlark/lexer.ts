/**
 * Tokens of the Starlark subset that rule files use. Positions are 1-based line:col of the token start.
 * Newlines inside brackets are joined (implicit line joining); comments and blank lines vanish.
 */
import { PolicyError } from '../error.js';

export type TokenKind = 'ident' | 'string' | 'int' | 'op' | 'newline' | 'indent' | 'eof';

export interface Token {
  kind: TokenKind;
  /** identifier name, decoded string value, operator text, or digits */
  value: string;
  line: number;
  col: number;
}

const OPS1 = new Set(['(', ')', '[', ']', '{', '}', ',', '=', '+', '-', '*', '/', '%', ':', ';', '.', '<', '>', '&', '|', '^', '~', '@', '!']);

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"' };

/** The operator starting at i (longest match), without allocating for the common one-character case. */
function operatorAt(text: string, i: number): string | undefined {
  const c = text[i];
  const c2 = text[i + 1];
  if (c2 === '=' && '=!<>+-*/%&|^'.includes(c)) return c + '=';
  if (c2 === c && (c === '/' || c === '*' || c === '<' || c === '>')) return text[i + 2] === '=' ? c + c + '=' : c + c;
  if (c === '-' && c2 === '>') return '->';
  return OPS1.has(c) ? c : undefined;
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isIdentChar(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}
const isQuote = (ch: string | undefined) => ch === '"' || ch === "'";
const isPrefixChar = (ch: string | undefined) => ch !== undefined && 'rRbBfF'.includes(ch);

/** All tokens at once (for tools that scan a whole file, like the amendment dedupe). */
export function tokenize(text: string, file: string): Token[] {
  return [...lex(text, file)];
}

/** Tokens on demand, so a large file's tokens die young instead of filling the heap. */
export function* lex(text: string, file: string): Generator<Token, void, undefined> {
  let last: TokenKind | undefined;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0; // bracket nesting: newlines inside are insignificant
  const open: { op: string; line: number; col: number }[] = [];
  let atLineStart = true;
  const n = text.length;
  const fail = (msg: string, l = line, c = i - lineStart + 1): never => {
    throw new PolicyError(msg, { file, line: l, col: c });
  };

  while (i < n) {
    const c = text[i];
    if (atLineStart && depth === 0) {
      // measure indentation of a logical line; blank/comment-only lines do not count
      let j = i;
      while (j < n && (text[j] === ' ' || text[j] === '\t' || text[j] === '\f')) j++;
      if (j < n && text[j] !== '\n' && text[j] !== '#' && text[j] !== '\r' && j > i) {
        yield { kind: (last = 'indent'), value: '', line, col: j - lineStart + 1 };
      }
      i = j;
      atLineStart = false;
      continue;
    }
    if (c === '\n') {
      if (depth === 0 && last !== undefined && last !== 'newline') {
        yield { kind: (last = 'newline'), value: '', line, col: i - lineStart + 1 };
      }
      i++;
      line++;
      lineStart = i;
      atLineStart = true;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') {
      // explicit line continuation
      i += 2;
      line++;
      lineStart = i;
      continue;
    }
    const col = i - lineStart + 1;
    const startLine = line;
    // string literal, with optional r/b/f prefixes
    let plen = -1;
    if (isQuote(c)) plen = 0;
    else if (isPrefixChar(c) && isQuote(text[i + 1])) plen = 1;
    else if (isPrefixChar(c) && isPrefixChar(text[i + 1]) && isQuote(text[i + 2]) && /^([rR][bBfF]|[bBfF][rR])$/.test(text.slice(i, i + 2))) plen = 2;
    if (plen >= 0) {
      const prefix = text.slice(i, i + plen).toLowerCase();
      if (prefix.includes('f')) fail('unsupported Starlark construct: f-string', startLine, col);
      if (prefix.includes('b')) fail('unsupported Starlark construct: bytes literal', startLine, col);
      const raw = prefix.includes('r');
      i += prefix.length;
      const q = text[i];
      const triple = text[i + 1] === q && text[i + 2] === q;
      const delim = triple ? q.repeat(3) : q;
      i += delim.length;
      let value = '';
      for (;;) {
        if (i >= n) fail('unfinished string literal', startLine, col);
        const d = text[i];
        if (text.startsWith(delim, i)) {
          i += delim.length;
          break;
        }
        if (d === '\n') {
          if (!triple) fail('unfinished string literal', startLine, col);
          value += d;
          i++;
          line++;
          lineStart = i;
          continue;
        }
        if (d === '\\') {
          const e = text[i + 1];
          if (e === undefined) fail('unfinished string literal', startLine, col);
          if (raw) {
            // raw strings keep backslashes, except before a quote: starlark-rust keeps only the quote
            value += e === '"' || e === "'" ? e : d + e;
            if (e === '\n') {
              line++;
              lineStart = i + 2;
            }
            i += 2;
            continue;
          }
          if (e === '\n') {
            i += 2;
            line++;
            lineStart = i;
            continue;
          }
          if (e in ESCAPES) {
            value += ESCAPES[e];
            i += 2;
            continue;
          }
          if (e >= '0' && e <= '7') {
            const m = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4))![0];
            value += String.fromCodePoint(parseInt(m, 8));
            i += 1 + m.length;
            continue;
          }
          const hexLen = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
          if (hexLen) {
            const h = text.slice(i + 2, i + 2 + hexLen);
            if (!new RegExp(`^[0-9a-fA-F]{${hexLen}}$`).test(h)) fail(`invalid escape sequence \\${e}${h}`, line, i - lineStart + 1);
            const cp = parseInt(h, 16);
            if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail(`invalid escape sequence \\${e}${h}`, line, i - lineStart + 1);
            value += String.fromCodePoint(cp);
            i += 2 + hexLen;
            continue;
          }
          // unknown escapes are kept literally, as starlark-rust does
          value += d + e;
          i += 2;
          continue;
        }
        // copy the run of ordinary characters up to the next quote, backslash or newline
        let j = i + 1;
        while (j < n) {
          const cj = text.charCodeAt(j);
          if (cj === 92 || cj === 10 || cj === 34 || cj === 39) break;
          j++;
        }
        value += text.slice(i, j);
        i = j;
      }
      yield { kind: (last = 'string'), value, line: startLine, col };
      continue;
    }
    const code = text.charCodeAt(i);
    if (isIdentStart(code)) {
      let j = i + 1;
      while (j < n && isIdentChar(text.charCodeAt(j))) j++;
      yield { kind: (last = 'ident'), value: text.slice(i, j), line, col };
      i = j;
      continue;
    }
    if (code >= 48 && code <= 57) {
      let j = i + 1;
      while (j < n && (isIdentChar(text.charCodeAt(j)) || text[j] === '.')) j++;
      const num = text.slice(i, j);
      if (!/^(0|[1-9][0-9]*|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)$/.test(num)) {
        fail(`unsupported Starlark construct: number literal ${num}`, line, col);
      }
      yield { kind: (last = 'int'), value: num, line, col };
      i = j;
      continue;
    }
    const op = operatorAt(text, i);
    if (op === undefined) fail(`unexpected character ${JSON.stringify(c)}`, line, col);
    if (op === '(' || op === '[' || op === '{') {
      depth++;
      open.push({ op, line, col });
    }
    if (op === ')' || op === ']' || op === '}') {
      depth = Math.max(0, depth - 1);
      open.pop();
    }
    yield { kind: (last = 'op'), value: op!, line, col };
    i += op!.length;
  }
  const unclosed = open.pop();
  if (unclosed) fail(`Parse error: unclosed '${unclosed.op}' at end of file`, unclosed.line, unclosed.col);
  if (last !== undefined && last !== 'newline') yield { kind: 'newline', value: '', line, col: i - lineStart + 1 };
  yield { kind: 'eof', value: '', line, col: i - lineStart + 1 };
}
