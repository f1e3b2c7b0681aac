/**
 * The plain-HTTP front's reading of heads and bodies (src/network/http-message.ts, pure): where a head
 * ends, its fields, the framing of a request's and an answer's body (RFC 9112 §6.3), heads that two
 * parsers could read two ways refused, and where a chunked body ends when its bytes come in pieces.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ChunkedEnd, headEnd, parseHead, requestFraming, responseFraming } from '../../src/network/http-message.js';

const head = (s: string) => {
  const b = Buffer.from(s, 'latin1');
  const h = parseHead(b.subarray(0, headEnd(b)));
  assert.notEqual(typeof h, 'string', String(h));
  return h as Exclude<ReturnType<typeof parseHead>, string>;
};

test('a head: its end, start line, fields as sent, and the bytes forwarded after the start line', () => {
  const raw = 'GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nX-Two:  b \r\n\r\nBODY';
  assert.equal(headEnd(Buffer.from(raw)), raw.indexOf('BODY'));
  assert.equal(headEnd(Buffer.from('GET / HTTP/1.1\r\nHost: a')), -1);
  const h = head(raw);
  assert.equal(h.start, 'GET http://a.test/x HTTP/1.1');
  assert.deepEqual(h.fields, [
    ['Host', 'a.test'],
    ['X-Two', 'b'],
  ]);
  assert.equal(h.rest.toString(), 'Host: a.test\r\nX-Two:  b \r\n\r\n');
  assert.equal(head('GET http://a.test/ HTTP/1.1\r\n\r\n').rest.toString(), '\r\n');
});

test('heads that two parsers could read two ways are refused', () => {
  for (const bad of [
    'GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n', // obsolete line folding
    'GET / HTTP/1.1\r\nHost : a\r\n\r\n', // whitespace before the colon
    'GET / HTTP/1.1\r\nHo\nst: a\r\n\r\n', // a bare LF
    'GET / HTTP/1.1\r\nX: a\rb\r\n\r\n', // a bare CR
    'GET / HTTP/1.1\r\nX: a\0b\r\n\r\n', // NUL
  ]) {
    const b = Buffer.from(bad, 'latin1');
    assert.equal(typeof parseHead(b.subarray(0, headEnd(b))), 'string', JSON.stringify(bad));
  }
});

test("a request's body: none, a length, chunked; both framings or an unusable length refused", () => {
  const f = (fields: string) => requestFraming(head(`POST http://a/ HTTP/1.1\r\n${fields}\r\n`).fields);
  assert.deepEqual(f(''), { kind: 'none' });
  assert.deepEqual(f('Content-Length: 12\r\n'), { kind: 'length', n: 12 });
  assert.deepEqual(f('Content-Length: 12\r\nContent-Length: 12\r\n'), { kind: 'length', n: 12 });
  assert.deepEqual(f('Transfer-Encoding: gzip, chunked\r\n'), { kind: 'chunked' });
  assert.match(String(f('Content-Length: 12\r\nTransfer-Encoding: chunked\r\n')), /both/);
  assert.match(String(f('Content-Length: 12\r\nContent-Length: 13\r\n')), /unusable/);
  assert.match(String(f('Content-Length: -1\r\n')), /unusable/);
  assert.match(String(f('Transfer-Encoding: chunked, gzip\r\n')), /does not end in chunked/);
});

test("an answer's body: by the request's method and the status, a length, chunked, or up to the close", () => {
  const f = (fields: string, status = 200, method = 'GET') => responseFraming(head(`HTTP/1.1 ${status} X\r\n${fields}\r\n`).fields, status, method);
  assert.deepEqual(f('Content-Length: 5\r\n', 200, 'HEAD'), { kind: 'none' });
  assert.deepEqual(f('Content-Length: 5\r\n', 304), { kind: 'none' });
  assert.deepEqual(f('', 204), { kind: 'none' });
  assert.deepEqual(f('Content-Length: 5\r\n'), { kind: 'length', n: 5 });
  assert.deepEqual(f('Content-Length: 0\r\n'), { kind: 'none' });
  assert.deepEqual(f('Transfer-Encoding: chunked\r\n'), { kind: 'chunked' });
  assert.deepEqual(f(''), { kind: 'close' });
  assert.match(String(f('Transfer-Encoding: chunked\r\nContent-Length: 5\r\n')), /both/);
});

test('the end of a chunked body, fed a byte at a time or whole, with extensions and trailers; what follows is not counted', () => {
  const body = '5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer: x\r\n\r\n';
  const next = 'GET http://b/ HTTP/1.1\r\n\r\n';
  const whole = new ChunkedEnd();
  assert.equal(whole.feed(Buffer.from(body + next)), body.length);
  assert.ok(whole.done);
  const bytewise = new ChunkedEnd();
  let taken = 0;
  for (const c of Buffer.from(body + next)) {
    if (bytewise.done) break;
    taken += bytewise.feed(Buffer.from([c]));
  }
  assert.equal(taken, body.length);
  assert.throws(() => new ChunkedEnd().feed(Buffer.from('zz\r\n')), /chunk size/);
  assert.throws(() => new ChunkedEnd().feed(Buffer.from('2\r\nabX\r\n')), /CRLF/);
});
