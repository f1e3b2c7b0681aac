/**
 * Non-UTF-8 bytes on the request channel. JSON carries only valid strings, so the shims send a request
 * whose program, argv, cwd, env values or script are not valid UTF-8 with `encoding: "base64"`: every one
 * of those strings is then base64 of the raw bytes. The daemon decodes them before deciding; invalid
 * sequences become U+FFFD, which is enough to match rules (`rm $'\xff'` is still `rm`) but cannot be
 * spawned byte for byte — so such a grant is never escalated (escalation-runner.ts refuses it).
 */
import type { Envelope } from './codec.js';

export const LOSSY = '\uFFFD';

function b64(v: unknown): unknown {
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
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
  return words.some((w) => w.includes(LOSSY));
}
