/**
 * The supervisors' notice socket (`<session>/notice.sock`, unix datagrams, no replies): where a run's
 * supervisor (shims/launch/reuse.c, tell_reused) tells the daemon of an exec it answered from a reused Run
 * and could not audit itself (ExecReused). It lies in the session folder, outside the request folder, so
 * it is inside the runtime folder every sandbox hides (src/sandbox/gate-context.ts, hiddenPaths): only a
 * process outside every sandbox — a supervisor, never a gated run — can reach it. The request channel,
 * which sandboxes reach, takes no ExecReused (src/daemon/daemon.ts), so no gated run can write an audit
 * record of an exec it did not make. Not pure: binds the socket.
 * Trust boundary: the senders are outside the sandbox, but a notice is still validated and its grant
 * checked (reuse-grants.ts) before it is recorded.
 */
import { chmodSync, unlinkSync } from 'node:fs';
import { decode, type Envelope, ProtocolError } from '../protocol/index.js';
import { checkSocketPath } from '../paths/index.js';
import { type DgramSocket, unixDgram } from '../transport/index.js';

export interface NoticeChannel {
  close(): void;
}

/** Serve `path`: each datagram decoded and handed to `onNotice` (which validates it); errors only logged,
 * at most a few a minute (a flood of bad notices must not flood the daemon's log). */
export async function openNoticeChannel(path: string, onNotice: (msg: Envelope) => void, log: (line: string) => void): Promise<NoticeChannel> {
  checkSocketPath(path);
  try {
    unlinkSync(path); // stale: the caller holds the session lock
  } catch {
    /* not there */
  }
  let budget = { until: 0, left: 0 };
  const say = (line: string): void => {
    const now = Date.now();
    if (now > budget.until) budget = { until: now + 60_000, left: 5 };
    if (budget.left-- > 0) log(`notice.sock: ${line}`);
  };
  const sock: DgramSocket = unixDgram.createSocket('unix_dgram', (buf) => {
    try {
      onNotice(decode(buf));
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      say(`notice dropped (${e.code}): ${e.message}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    sock.once('listening', resolve);
    sock.once('error', reject);
    sock.bind(path);
  });
  sock.on('error', (e: Error) => say(e.message));
  chmodSync(path, 0o600);
  return {
    close: () => {
      try {
        sock.close();
      } catch {
        /* closed */
      }
      try {
        unlinkSync(path);
      } catch {
        /* gone */
      }
    },
  };
}
