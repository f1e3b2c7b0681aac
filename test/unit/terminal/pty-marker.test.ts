/** The end marker scanner: every split of the stream gives the same output and marker. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MarkerScanner, markerPrefix } from '../../../src/terminal/pty-marker.js';

const nonce = 'abc123';
const marker = (status: number, payload = '') => Buffer.concat([markerPrefix(nonce), Buffer.from(`${status};${Buffer.byteLength(payload)};${payload}\x07`)]);

function scanAll(chunks: Buffer[]) {
  const s = new MarkerScanner(nonce);
  const out: Buffer[] = [];
  for (const c of chunks) {
    const r = s.push(c);
    out.push(r.output);
    if (r.marker) return { output: Buffer.concat(out), marker: r.marker, rest: r.rest };
  }
  out.push(s.flush());
  return { output: Buffer.concat(out) };
}

test('the marker is found and removed at every split point', () => {
  const body = Buffer.from('line\r\n\x1b]7770;other;1;0;\x07\xff\x1b]77\x1b]7770;abc12');
  const stream = Buffer.concat([body, marker(42, '/tmp/a;b\x07c')]);
  for (let i = 0; i <= stream.length; i++) {
    for (const j of [i, Math.min(stream.length, i + 1), Math.min(stream.length, i + 7)]) {
      const r = scanAll([stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]);
      assert.deepEqual(r.output, body, `split ${i}/${j}`);
      assert.equal(r.marker?.status, 42);
      assert.equal(r.marker?.payload.toString('latin1'), '/tmp/a;b\x07c');
    }
  }
});

test('a malformed marker with the right nonce stays output; bytes after the marker are returned', () => {
  const bad = Buffer.concat([markerPrefix(nonce), Buffer.from('x;0;\x07')]);
  const r = scanAll([Buffer.concat([bad, Buffer.from('ok'), marker(0), Buffer.from('late')])]);
  assert.deepEqual(r.output, Buffer.concat([bad, Buffer.from('ok')]));
  assert.equal(r.marker?.status, 0);
  assert.equal(r.rest?.toString(), 'late');
});

test('a stream without a marker comes through unchanged, a partial tail is flushed', () => {
  const all = Buffer.from([0, 1, 0x1b, 0x5d, 0x37, 0xff, 0x1b, 0x5d, 0x37, 0x37]);
  const r = scanAll([all]);
  assert.deepEqual(r.output, all);
  assert.equal(r.marker, undefined);
});
