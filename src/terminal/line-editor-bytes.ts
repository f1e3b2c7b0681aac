/**
 * Byte-exact lines through node:readline, which decodes its input as UTF-8 (invalid bytes would become
 * U+FFFD). Keys are decoded here first: valid UTF-8 passes as is, each byte of an invalid sequence becomes
 * the private-use character U+F700+byte, and a finished line is turned back into the exact bytes typed.
 * Pure: no I/O.
 */

const ESCAPE_BASE = 0xf700;

/** Length of the UTF-8 sequence led by `b`, or 0 when `b` cannot lead one. */
function seqLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/** Is data[i..i+n) a valid UTF-8 sequence (no overlongs, no surrogates, ≤ U+10FFFF)? */
function validSeq(data: Buffer, i: number, n: number): boolean {
  for (let k = 1; k < n; k++) if ((data[i + k] & 0xc0) !== 0x80) return false;
  const b0 = data[i];
  const b1 = data[i + 1];
  if (n === 3 && b0 === 0xe0 && b1 < 0xa0) return false;
  if (n === 3 && b0 === 0xed && b1 >= 0xa0) return false;
  if (n === 4 && b0 === 0xf0 && b1 < 0x90) return false;
  if (n === 4 && b0 === 0xf4 && b1 >= 0x90) return false;
  return true;
}

/** Streaming decoder: feed raw key bytes, get text for readline (a sequence split across chunks waits). */
export class ByteEscaper {
  private pending = Buffer.alloc(0);

  push(chunk: Buffer): string {
    const data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    let out = '';
    let i = 0;
    while (i < data.length) {
      const n = seqLength(data[i]);
      if (n === 0) {
        out += String.fromCharCode(ESCAPE_BASE + data[i++]);
        continue;
      }
      if (i + n > data.length) {
        // maybe the rest arrives with the next key; keep it only while it still looks valid
        const tail = data.subarray(i);
        if (tail.subarray(1).every((c) => (c & 0xc0) === 0x80)) {
          this.pending = Buffer.from(tail);
          break;
        }
      }
      if (i + n <= data.length && validSeq(data, i, n)) {
        out += data.subarray(i, i + n).toString('utf8');
        i += n;
      } else out += String.fromCharCode(ESCAPE_BASE + data[i++]);
    }
    return out;
  }
}

/** The bytes a line stands for: escaped bytes back to themselves, everything else UTF-8. */
export function lineBytes(line: string): Buffer {
  const parts: Buffer[] = [];
  let run = '';
  for (const ch of line) {
    const c = ch.codePointAt(0)!;
    if (c >= ESCAPE_BASE + 0x80 && c <= ESCAPE_BASE + 0xff) {
      if (run) parts.push(Buffer.from(run, 'utf8'));
      run = '';
      parts.push(Buffer.from([c - ESCAPE_BASE]));
    } else run += ch;
  }
  if (run) parts.push(Buffer.from(run, 'utf8'));
  return Buffer.concat(parts);
}
