/**
 * A faithful reading of bytes that are not UTF-8. Pure.
 *
 * Bash runs bytes; the parsers and rules work on text. Valid UTF-8 reads as itself; every byte of an
 * invalid sequence reads as one private-use character, U+F780 + (byte − 0x80) (the "UTF-8b" idea, in the
 * private-use plane so the text stays valid and JSON-safe). To bash such a byte is a word character, and so
 * is a private-use character to the parsers: the script's shape — its words, operators and quotes — is the
 * same in the reading as in the bytes bash runs, so it can be decided rather than asked about.
 * `rawBytes` turns a reading back into the bytes; `display.ts` shows such a character as bash's `\xNN`.
 *
 * The reading is one-to-one: a script's own U+F780..U+F7FF (EF 9E xx, EF 9F xx) reads as its three raw
 * bytes, so every byte string reads back as itself.
 *
 * Trust boundary: the bytes come from the agent's script (untrusted); nothing here decides.
 */

const BASE = 0xf700;
/** One raw byte's character (0x80..0xff only: ASCII is always valid UTF-8). */
export const RAW_BYTE = /[\uf780-\uf7ff]/;
const RAW_BYTE_ALL = /[\uf780-\uf7ff]/g;

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function validAt(b: Uint8Array, i: number): number {
  const c = b[i];
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k] >= lo && b[i + k] <= hi;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0; // no surrogates
  if (c === 0xef) return cont(1, 0x80, 0x9d) && cont(2) ? 3 : cont(1, 0xa0) && cont(2) ? 3 : 0; // U+F780..F7FF read as bytes
  if (c >= 0xe1 && c <= 0xee) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** The text reading of `bytes`: UTF-8 where valid, one RAW_BYTE character per byte elsewhere. */
export function readBytes(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let out = '';
  let run = 0; // start of the current valid run
  let i = 0;
  while (i < buf.length) {
    const n = validAt(buf, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += buf.toString('utf8', run, i) + String.fromCharCode(BASE + buf[i]);
    i += 1;
    run = i;
  }
  return out + buf.toString('utf8', run, buf.length);
}

/** The bytes a reading stands for (the inverse of readBytes). */
export function rawBytes(text: string): Buffer {
  if (!RAW_BYTE.test(text)) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let from = 0;
  for (const m of text.matchAll(RAW_BYTE_ALL)) {
    const at = m.index ?? 0;
    parts.push(Buffer.from(text.slice(from, at), 'utf8'), Buffer.of(m[0].charCodeAt(0) - BASE));
    from = at + 1;
  }
  parts.push(Buffer.from(text.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

/** Whether a text holds a raw byte (it came from bytes that are not UTF-8). */
export function hasRawBytes(words: readonly string[]): boolean {
  return words.some((w) => RAW_BYTE.test(w));
}
