/**
 * Is a daemon answering? One framed ping over stream.sock (node:net only: this sits on gate-sh's start-up
 * path when the daemon is not running yet, so it must stay light). Not pure (a socket); trusts nothing it
 * reads beyond the ack's id.
 */
import { createConnection } from 'node:net';
import { decode, Deframer, encode, frame, newId, PROTOCOL_VERSION } from '../protocol/index.js';
import type { GatePaths } from '../paths/index.js';

/** What one ping found: the daemon's info, a connect error (`ENOENT`, `EPERM`, ...), or silence. */
export type PingResult = { ok: true; info: Record<string, unknown> } | { ok: false; code: string } | { ok: false; code: 'timeout' };

/** One ping, saying why it failed. Never throws. */
export function probeDaemon(paths: GatePaths, timeoutMs = 1000): Promise<PingResult> {
  return new Promise((resolve) => {
    const id = newId();
    const conn = createConnection(paths.streamSock);
    const deframer = new Deframer();
    const done = (v: PingResult): void => {
      clearTimeout(timer);
      conn.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done({ ok: false, code: 'timeout' }), timeoutMs);
    conn.on('error', (e: NodeJS.ErrnoException) => done({ ok: false, code: e.code ?? 'EIO' }));
    conn.on('connect', () => conn.write(frame(encode({ v: PROTOCOL_VERSION, id, type: 'ping' }))));
    conn.on('data', (chunk: Buffer) => {
      try {
        for (const f of deframer.push(chunk)) {
          const m = decode(f);
          if (m.id === id && m.type === 'ack') return done({ ok: true, info: (m.info as Record<string, unknown>) ?? {} });
        }
      } catch {
        done({ ok: false, code: 'EPROTO' });
      }
    });
  });
}

/** The daemon's info when it answers within timeoutMs, else undefined. Never throws. */
export async function pingDaemon(paths: GatePaths, timeoutMs = 1000): Promise<Record<string, unknown> | undefined> {
  const r = await probeDaemon(paths, timeoutMs);
  return r.ok ? r.info : undefined;
}
