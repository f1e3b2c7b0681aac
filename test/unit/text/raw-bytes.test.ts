/**
 * The faithful reading of bytes that are not UTF-8 (src/text/raw-bytes.ts): valid UTF-8 reads as itself,
 * each byte of an invalid sequence as one private-use character; the reading turns back into the same bytes;
 * a prompt shows such a byte as bash's `\xNN`; the parse of a latin-1 script has bash's words. Pure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasRawBytes, rawBytes, readBytes } from '../../../src/text/raw-bytes.js';
import { displayCommand } from '../../../src/text/display.js';
import { analyzeScript } from '../../../src/script/analyze.js';

test('valid UTF-8 reads as itself; invalid sequences byte by byte; every reading turns back into its bytes', () => {
  assert.equal(readBytes(Buffer.from('café ✓ 😀', 'utf8')), 'café ✓ 😀');
  const cases = [
    [0x63, 0xe9], // latin-1
    [0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80], // lone byte, broken pair, surrogate
    [0xe0, 0x80, 0x80], // overlong
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xf0, 0x9f, 0x98], // cut at the end
    [0xc3, 0xa9, 0xe9, 0xc3, 0xa9], // valid around invalid
    [0xef, 0x9f, 0xbd, 0xef, 0x9e, 0x80], // U+F7FD, U+F780 as UTF-8: read as bytes, so the reading is one-to-one
  ];
  for (const c of cases) {
    const b = Buffer.from(c);
    const r = readBytes(b);
    assert.ok(Buffer.from(r, 'utf8').toString('utf8') === r, 'the reading is valid text');
    assert.deepEqual(rawBytes(r), b, `round trip of ${b.toString('hex')}`);
  }
  assert.equal(readBytes(Buffer.from([0x63, 0xe9])), 'c\uf7e9');
  assert.equal(readBytes(Buffer.from([0xc3, 0xa9, 0xe9])), 'é\uf7e9');
  // 256 random buffers round-trip
  let x = 7;
  for (let n = 0; n < 256; n++) {
    const b = Buffer.alloc(40);
    for (let i = 0; i < b.length; i++) b[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    assert.deepEqual(rawBytes(readBytes(b)), b);
  }
  assert.equal(hasRawBytes(['rm', 't\uf7ff']), true);
  assert.equal(hasRawBytes(['rm', 'café']), false);
});

test("a prompt shows a raw byte as bash's \\xNN, which bash reads back as that byte", () => {
  assert.equal(displayCommand(['echo', readBytes(Buffer.from('caf\xe9', 'latin1'))]), "echo $'caf\\xe9'");
});

test('a latin-1 script parses into the words bash runs: plain, judged, not unread', () => {
  const a = analyzeScript(readBytes(Buffer.from("echo caf\xe9 && rm -f 'n\xe9e'", 'latin1')));
  assert.equal(a.kind, 'plain');
  if (a.kind !== 'plain') return;
  assert.deepEqual(
    a.commands.map((c) => c.argv.map((w) => rawBytes(w).toString('latin1'))),
    [
      ['echo', 'caf\xe9'],
      ['rm', '-f', 'n\xe9e'],
    ],
  );
});
