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

// Longest first so `**` wins over `*`, `==` over `=`.
const OPERATORS = [
  '**=', '//=', '>>=', '<<=', '==', '!=', '<=', '>=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '//', '**', '->', '<<', '>>',
  '(', ')', '[', ']', '{', '}', ',', '=', '+', '-', '*', '/', '%', ':', ';', '.', '<', '>', '&', '|', '^', '~', '@', '!',
];

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"' };

export function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0; // bracket nesting: newlines inside are insignificant
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
        tokens.push({ kind: 'indent', value: '', line, col: j - lineStart + 1 });
      }
      i = j;
      atLineStart = false;
      continue;
    }
    if (c === '\n') {
      if (depth === 0 && tokens.length && tokens[tokens.length - 1].kind !== 'newline') {
        tokens.push({ kind: 'newline', value: '', line, col: i - lineStart + 1 });
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
    const pm = /^([rRbBfF]{0,2})(['"])/.exec(text.slice(i, i + 3));
    if (pm && (pm[1].length === 0 || /^[rR]?$|^[bBfF][rR]?$|^[rR][bBfF]$/.test(pm[1]))) {
      const prefix = pm[1].toLowerCase();
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
            // raw strings keep the backslash; it still protects a quote or newline from ending the literal
            value += d + e;
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
        value += d;
        i++;
      }
      tokens.push({ kind: 'string', value, line: startLine, col });
      continue;
    }
    const idm = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 256));
    if (idm) {
      tokens.push({ kind: 'ident', value: idm[0], line, col });
      i += idm[0].length;
      continue;
    }
    const num = /^[0-9][0-9A-Za-z_.]*/.exec(text.slice(i, i + 64));
    if (num) {
      if (!/^(0|[1-9][0-9]*|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)$/.test(num[0])) {
        fail(`unsupported Starlark construct: number literal ${num[0]}`, line, col);
      }
      tokens.push({ kind: 'int', value: num[0], line, col });
      i += num[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) fail(`unexpected character ${JSON.stringify(c)}`, line, col);
    if (op === '(' || op === '[' || op === '{') depth++;
    if (op === ')' || op === ']' || op === '}') depth = Math.max(0, depth - 1);
    tokens.push({ kind: 'op', value: op!, line, col });
    i += op!.length;
  }
  if (tokens.length && tokens[tokens.length - 1].kind !== 'newline') tokens.push({ kind: 'newline', value: '', line, col: i - lineStart + 1 });
  tokens.push({ kind: 'eof', value: '', line, col: i - lineStart + 1 });
  return tokens;
}
