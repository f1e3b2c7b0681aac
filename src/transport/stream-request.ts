/**
 * A request over the stream socket (u32 little-endian length + JSON frames): for messages over
 * MAX_DATAGRAM, for a reply too large for a datagram, and when the datagram queue stays full. One
 * connection carries the request and its replies; its close means the daemon is gone. node:net is loaded
 * only here, and only when needed (gate-sh's hot path never needs it).
 */
import { Deframer, type Envelope, frame, type Pending, type Reply } from '../protocol/index.js';
import { checkSocketPath, type GatePaths } from '../paths/index.js';
import type { RequestOptions } from './request-options.js';
import { decodeReply, fromErrorReply, notRunning, RequestError, unreachable } from './client-errors.js';

/** Large messages: one stream connection carries the request and its replies; its close means the daemon is gone. */
export async function streamRequest<R extends Reply>(paths: GatePaths, env: Envelope, buf: Buffer, opts: RequestOptions, signal?: AbortSignal): Promise<R> {
  const net = await import('node:net');
  const timeoutMs = opts.timeoutMs ?? 2000;
  if (signal?.aborted) throw new RequestError('not-answering', 'answered on the datagram socket');
  return new Promise<R>((resolve, reject) => {
    const conn = net.createConnection(checkSocketPath(paths.streamSock));
    const deframer = new Deframer();
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (err: RequestError | undefined, reply?: R): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      conn.destroy();
      if (err) reject(err);
      else resolve(reply as R);
    };
    signal?.addEventListener('abort', () => done(new RequestError('not-answering', 'answered on the datagram socket')), { once: true });
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => done(new RequestError('not-answering', `the gate daemon did not answer within ${(ms / 1000).toFixed(1)} s (stream); check 'gate status'`)),
        ms,
      );
    };
    conn.on('connect', () => {
      conn.write(frame(buf));
      arm(timeoutMs * ((opts.retries ?? 2) + 1) + Math.ceil(buf.length / 65536)); // no resend on a stream: one longer wait
    });
    conn.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return done(notRunning(paths.streamSock, 'no socket'));
      if (e.code === 'ECONNREFUSED') return done(notRunning(paths.streamSock, 'stale socket'));
      if (e.code === 'EPERM' || e.code === 'EACCES' || e.code === 'EROFS')
        return done(unreachable(`connecting to ${paths.streamSock} is refused with ${e.code}`));
      done(new RequestError('protocol', `stream connection to the gate daemon failed: ${e.message}`));
    });
    conn.on('close', () => done(new RequestError('not-answering', `the gate daemon closed the connection before answering; check 'gate status'`)));
    conn.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = deframer.push(chunk);
      } catch (e) {
        return done(new RequestError('protocol', `protocol error from the gate daemon: ${(e as Error).message}`));
      }
      for (const f of frames) {
        const m = decodeReply(f);
        if (m instanceof RequestError) return done(m);
        if (m.id !== env.id) continue;
        if (m.type === 'pending') {
          opts.onPending?.(m as unknown as Pending);
          clearTimeout(timer); // the open connection is the liveness signal now
          continue;
        }
        if (m.type === 'error') return done(fromErrorReply(m as unknown as { code: string; message: string }));
        return done(undefined, m as unknown as R);
      }
    });
  });
}
