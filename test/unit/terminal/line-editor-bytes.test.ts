/** Keys through readline keep their bytes: valid UTF-8 as text, invalid bytes escaped and restored. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteEscaper, lineBytes } from '../../../src/terminal/line-editor-bytes.js';

test('every byte string survives escape and restore, at every split', () => {
  const samples = [
    Buffer.from('plain ascii'),
    Buffer.from('héllo — 世界 🙂'),
    Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xe2, 0x82, 0xed, 0xa0, 0x80, 0xf0, 0x8f, 0xbf, 0xbf, 0xc0, 0xaf, 0x41]),
    Buffer.from([0xe2, 0x82, 0xac, 0xf4, 0x90, 0x80, 0x80, 0xc3]),
  ];
  for (const bytes of samples) {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const e = new ByteEscaper();
      const text = e.push(bytes.subarray(0, cut)) + e.push(bytes.subarray(cut)) + e.push(Buffer.from('\r'));
      assert.ok(!text.includes('\ufffd'), 'nothing becomes U+FFFD');
      assert.deepEqual(lineBytes(text.slice(0, -1)), bytes, `${bytes.toString('hex')} cut at ${cut}`);
    }
  }
});

test('valid UTF-8 is passed as the same text', () => {
  assert.equal(new ByteEscaper().push(Buffer.from('日本語 ok')), '日本語 ok');
});
