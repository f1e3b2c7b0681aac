/**
 * Typed access to the unix-dgram native addon (it ships no types). Loaded with createRequire because it is
 * CommonJS with a native binding.
 */
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';

export interface DgramSocket extends EventEmitter {
  bind(path: string): void;
  connect(path: string): void;
  send(buf: Buffer, offset: number, length: number, path: string, cb?: (err?: Error & { code?: number }) => void): void;
  close(): void;
}

interface UnixDgram {
  createSocket(type: 'unix_dgram', listener?: (buf: Buffer, rinfo: { path?: string; size: number }) => void): DgramSocket;
}

const require = createRequire(import.meta.url);
export const unixDgram = require('unix-dgram') as UnixDgram;

/** unix-dgram reports errors as negative errno numbers. */
export const EAGAIN = -11;
export const ENOENT = -2;
export const ECONNREFUSED = -111;
