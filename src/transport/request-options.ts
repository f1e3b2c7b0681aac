/**
 * How long one request waits and how often it is resent (the client's options): its own file so that the
 * client and its two transports (datagram-request.ts, stream-request.ts) share it without importing each
 * other. Pure (a type).
 */
import type { Pending } from '../protocol/index.js';

export interface RequestOptions {
  /** wait for an answer before the first resend (default 2000 ms); each later wait doubles, up to 4 s */
  timeoutMs?: number;
  /** resends after a timeout or a `busy` reply, same id (default 2) */
  retries?: number;
  /** while pending: liveness probe interval (default 500 ms) */
  heartbeatMs?: number;
  /** while pending: give up after this long without any sign of life (default 5000 ms) */
  pendingSilenceMs?: number;
  /** called on each `pending` message (approval in progress) */
  onPending?: (p: Pending) => void;
}
