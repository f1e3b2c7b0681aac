/**
 * Non-UTF-8 bytes on the request channel. JSON carries only valid strings, so the shims send a request
 * whose program, argv, cwd, env values or script are not valid UTF-8 with `encoding: "base64"`: every one
 * of those strings is then base64 of the raw bytes. The daemon reads them faithfully before deciding
 * (raw-bytes.ts: each invalid byte one private-use character), so the parse sees the shape bash sees and
 * rules still match (`rm $'\xff'` is `rm`). Such a grant is still never escalated (escalation-runner.ts):
 * the spawn there takes text.
 */
import type { Envelope } from './codec.js';
import { hasRawBytes, readBytes } from '../text/index.js';

function b64(v: unknown): unknown {
  return typeof v === 'string' ? readBytes(Buffer.from(v, 'base64')) : v;
}

/** Decode a base64-encoded exec or preflight request in place (a no-op without `encoding`). */
export function decodeWire(m: Envelope): Envelope {
  if (m.encoding === undefined) return m;
  if (m.encoding !== 'base64') return m; // the validator reports the unknown encoding
  for (const k of ['program', 'real_program', 'cwd', 'script']) if (k in m) m[k] = b64(m[k]);
  if (Array.isArray(m.argv)) m.argv = m.argv.map(b64);
  if (m.env && typeof m.env === 'object' && !Array.isArray(m.env)) {
    const env = m.env as Record<string, unknown>;
    for (const k of Object.keys(env)) env[k] = b64(env[k]);
  }
  delete m.encoding;
  m.lossy = true;
  return m;
}

/** True when a command came from bytes that are not UTF-8 (it cannot be reproduced by a spawn). */
export function isLossy(words: readonly string[]): boolean {
  return hasRawBytes(words);
}
