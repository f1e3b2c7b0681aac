/**
 * A tunnel between a client and the destination the proxy dialed (HTTP CONNECT, SOCKS5 CONNECT), once the
 * client was told it is open: the client's first bytes are read before anything reaches the destination;
 * when they are a TLS ClientHello (or the port is 443), its server name must be the tunnel's host, so an
 * allowed name cannot front for another (`curl --connect-to`, a CDN's SNI routing). A mismatch gets a TLS
 * alert (unrecognized_name), the destination nothing. Then bytes go both ways unchanged: by the daemon's
 * native relay thread (relay.ts: splice, off Node's loop), or piped in Node when there is none.
 * Not pure: sockets. Trust boundary: the client's bytes are untrusted (tls-sni.ts reads them).
 */
import type { Socket } from 'node:net';
import type { Dialed } from './dial.js';
import { handOver } from './relay.js';
import { readClientHello } from './tls-sni.js';

/** TLS alert record: fatal (2), unrecognized_name (112). */
const ALERT_UNRECOGNIZED_NAME = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70]);
/** how long the proxy waits for a ClientHello it needs */
const HELLO_TIMEOUT_MS = 30_000;

export interface TunnelOptions {
  host: string;
  /** a refusal after the tunnel was opened: for the run's stderr */
  refused(reason: string): Promise<void> | void;
  /** the tunnel's bytes went to the native relay (relay.ts) */
  relayed?(id: number, finished: Promise<unknown>): void;
  /** the client is a bridge that takes pipes (relay.ts) */
  pipes?: boolean;
}

/** `head`: bytes the client sent before the tunnel opened (after a CONNECT's headers) */
export function runTunnel(client: Socket, up: Dialed, o: TunnelOptions, head?: Buffer): void {
  const dest = up.socket;
  let buf = Buffer.alloc(0);
  let ended = false;
  const finish = (error?: string): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    up.done(error);
    client.destroy();
    dest.destroy();
  };
  // over when both sides closed (a half-close is passed on by pipe(), and what is in flight is delivered)
  let closed = 0;
  // while the sockets are being handed to the native relay, their closing is the relay's business
  let handing = false;
  const onClose = (): void => {
    if (!handing && ++closed === 2) finish();
  };
  const timer = setTimeout(() => finish('no ClientHello in time'), HELLO_TIMEOUT_MS);
  const refuse = (why: string, alert: boolean): void => {
    client.off('data', onFirst);
    clearTimeout(timer);
    // the line on the run's stderr first, then the client's alert (it may end the command at once)
    void Promise.resolve(o.refused(why)).then(() => {
      if (alert && !client.destroyed) client.end(ALERT_UNRECOGNIZED_NAME, () => finish(why));
      else finish(why);
    });
  };
  let opened = false;
  const pipeBoth = (): void => {
    if (buf.length) dest.write(buf);
    client.pipe(dest);
    dest.pipe(client);
    client.resume();
  };
  const open = (): void => {
    opened = true;
    clearTimeout(timer);
    client.off('data', onFirst);
    client.pause();
    // the bytes leave Node (relay.ts): the first ones read here go first
    if (buf.length) client.unshift(buf);
    buf = Buffer.alloc(0);
    handing = true;
    handOver(client, dest, { pipes: o.pipes }).then(
      (h) => {
        if (!h) return fallback();
        ended = true;
        o.relayed?.(h.id, h.finished);
        void h.finished.then((r) => {
          up.done(r.error ? `relay: ${r.error}` : undefined, { up: r.up, down: r.down - h.headDown });
        });
      },
      () => fallback(),
    );
  };
  const fallback = (): void => {
    handing = false;
    if (client.destroyed || dest.destroyed) return finish();
    pipeBoth();
  };
  const onFirst = (chunk: Buffer): void => {
    buf = Buffer.concat([buf, chunk]);
    const r = readClientHello(buf);
    if (r.kind === 'incomplete') return;
    if (r.kind === 'not-tls') {
      // only TLS can front: anything else on 443 goes as is to the host that was decided
      open();
      return;
    }
    if (r.kind === 'malformed') return refuse(`unreadable TLS ClientHello (${r.why})`, true);
    if (r.serverName !== null && r.serverName !== o.host)
      return refuse(`the TLS server name ${r.serverName} is not the host ${o.host} asked for (no fronting)`, true);
    open();
  };
  client.on('data', onFirst);
  if (head?.length) onFirst(head);
  // gone before its first bytes: nothing to carry
  client.once('end', () => {
    if (!opened) finish();
  });
  client.on('error', () => {
    if (!handing) finish();
  });
  dest.on('error', (e) => {
    if (!handing) finish(`destination: ${e.message}`);
  });
  client.once('close', onClose);
  dest.once('close', onClose);
}
