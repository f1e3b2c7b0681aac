/**
 * Is a daemon answering? One framed ping over stream.sock (node:net only: this sits on gate-sh's start-up
 * path when the daemon is not running yet, so it must stay light).
 */
import { createConnection } from 'node:net';
import { Deframer, encode, frame, newId, decode } from '../protocol/codec.js';
import { PROTOCOL_VERSION } from '../protocol/messages.js';
import type { GatePaths } from '../protocol/paths.js';

/** The daemon's info when it answers within timeoutMs, else undefined. Never throws. */
export function pingDaemon(paths: GatePaths, timeoutMs = 1000): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const id = newId();
    const conn = createConnection(paths.streamSock);
    const deframer = new Deframer();
    const done = (v: Record<string, unknown> | undefined): void => {
      clearTimeout(timer);
      conn.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    conn.on('error', () => done(undefined));
    conn.on('connect', () => conn.write(frame(encode({ v: PROTOCOL_VERSION, id, type: 'ping' }))));
    conn.on('data', (chunk: Buffer) => {
      try {
        for (const f of deframer.push(chunk)) {
          const m = decode(f);
          if (m.id === id && m.type === 'ack') return done((m.info as Record<string, unknown>) ?? {});
        }
      } catch {
        done(undefined);
      }
    });
  });
}
