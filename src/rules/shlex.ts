/**
 * POSIX word splitting and quoting exactly as the Rust `shlex` crate (1.3) does it, because Codex splits
 * `match`/`not_match` example strings with `shlex::split` and renders examples with `shlex::try_join`.
 */

/** Split like `shlex::split`; undefined when the input is erroneous (unterminated quote, trailing `\`). */
export function shlexSplit(input: string): string[] | undefined {
  const out: string[] = [];
  const n = input.length;
  let i = 0;
  while (i < n) {
    // skip blanks and comments (a `#` only starts a comment at the start of a word)
    const c = input[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && input[i] !== '\n') i++;
      continue;
    }
    let word = '';
    for (; i < n; i++) {
      const ch = input[i];
      if (ch === ' ' || ch === '\t' || ch === '\n') break;
      if (ch === "'") {
        const end = input.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += input.slice(i + 1, end);
        i = end;
      } else if (ch === '"') {
        i++;
        for (;;) {
          if (i >= n) return undefined;
          const d = input[i];
          if (d === '"') break;
          if (d === '\\') {
            if (i + 1 >= n) return undefined;
            const e = input[i + 1];
            if (e === '$' || e === '`' || e === '"' || e === '\\') word += e;
            else if (e !== '\n') word += '\\' + e;
            i += 2;
            continue;
          }
          word += d;
          i++;
        }
      } else if (ch === '\\') {
        if (i + 1 >= n) return undefined;
        i++;
        if (input[i] !== '\n') word += input[i];
      } else {
        word += ch;
      }
    }
    out.push(word);
  }
  return out;
}

const UNQUOTED = 1;
const SINGLE = 2;
const DOUBLE = 4;

function unquotedOk(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
    c === 0x2b || c === 0x2d || c === 0x2e || c === 0x2f || c === 0x3a || c === 0x40 || c === 0x5d || c === 0x5f
  );
}

/** Quote one word like `shlex::quote` (1.3): unquoted, single-quoted or double-quoted chunks. */
export function shlexQuote(word: string): string {
  if (word === '') return "''";
  const bytes = Buffer.from(word, 'utf8');
  let out = '';
  let pos = 0;
  while (pos < bytes.length) {
    let prev = UNQUOTED | SINGLE | DOUBLE;
    let i = pos;
    if (bytes[i] === 0x5e) {
      prev = SINGLE; // `^` only right after an opening single quote (bash bug)
      i++;
    }
    for (; i < bytes.length; i++) {
      const c = bytes[i];
      let cur = prev;
      if (c >= 0x80) cur &= ~UNQUOTED;
      else {
        if (!unquotedOk(c)) cur &= ~UNQUOTED;
        if (c === 0x27 || c === 0x5e || c === 0x5c) cur &= ~SINGLE;
        if (c === 0x60 || c === 0x24 || c === 0x21 || c === 0x5e) cur &= ~DOUBLE;
      }
      if (cur === 0) break;
      prev = cur;
    }
    const chunk = bytes.subarray(pos, i).toString('utf8');
    if (prev & UNQUOTED) out += chunk;
    else if (prev & SINGLE) out += `'${chunk}'`;
    else out += `"${chunk.replace(/[$`"\\]/g, '\\$&')}"`;
    pos = i;
  }
  return out;
}

/** `shlex::join`: quote each word, separate with one space. */
export function shlexJoin(words: readonly string[]): string {
  return words.map(shlexQuote).join(' ');
}
