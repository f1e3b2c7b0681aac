/**
 * Bash `$'...'` (ANSI-C quoting) decoding, as bash 5 does it. Input: the text between `$'` and `'`.
 * Returns null where the result is not a plain string we can be exact about: a NUL (bash cuts the word
 * there) or a raw byte above 0x7f (bash emits the byte, not a character).
 */
const SIMPLE: Record<string, string> = {
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
  '\\': '\\', "'": "'", '"': '"', '?': '?',
};

export function decodeAnsiC(body: string): string | null {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i];
    if (n in SIMPLE) out += SIMPLE[n];
    else if (n >= '0' && n <= '7') {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      const v = parseInt(m, 8) & 0xff;
      if (v === 0 || v > 0x7f) return null;
      out += String.fromCharCode(v);
      i += m.length - 1;
    } else if (n === 'x' && /^[0-9a-fA-F]/.test(body.slice(i + 1))) {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))![0];
      const v = parseInt(m, 16);
      if (v === 0 || v > 0x7f) return null;
      out += String.fromCharCode(v);
      i += m.length;
    } else if ((n === 'u' || n === 'U') && /^[0-9a-fA-F]/.test(body.slice(i + 1))) {
      const m = new RegExp(`^[0-9a-fA-F]{1,${n === 'u' ? 4 : 8}}`).exec(body.slice(i + 1))![0];
      const v = parseInt(m, 16);
      if (v === 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return null;
      out += String.fromCodePoint(v);
      i += m.length;
    } else if (n === 'c' && i + 1 < body.length) {
      const v = body.charCodeAt(++i) & 0x1f;
      if (v === 0) return null;
      out += String.fromCharCode(v);
    } else out += '\\' + n;
  }
  return out;
}
