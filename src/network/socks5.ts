/**
 * The SOCKS5 front of the proxy (RFC 1928): no authentication, CONNECT to a name, an IPv4 or an IPv6
 * address (`ALL_PROXY=socks5h://...`: names are sent to the proxy and resolved there). BIND and UDP
 * ASSOCIATE are refused (reply 7, command not supported): the sandbox reaches the proxy through one Unix
 * socket carrying streams, so there is no path for its datagrams; the run's stderr says so. A refusal is a
 * SOCKS5 failure reply: 2 (not allowed by ruleset) for a denial, 4 (host unreachable) when the name does
 * not resolve, 5 (refused) when the destination refuses.
 * Not pure: the client's socket. Trust boundary: every byte comes from the sandboxed client; lengths are
 * checked, and a greeting or request that does not arrive within HANDSHAKE_TIMEOUT_MS is dropped.
 */
import type { Socket } from 'node:net';
import { canonicalHost, deniedLine, dial, type DialContext } from './dial.js';
import { runTunnel } from './tunnel.js';

const HANDSHAKE_TIMEOUT_MS = 30_000;

/** A reply with an all-zero IPv4 bound address (clients do not use it for CONNECT). */
function reply(code: number): Buffer {
  return Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
}

/** Reads exactly n bytes from the socket (paused between reads), or null when it closed first. */
class Reader {
  private buf = Buffer.alloc(0);
  private waiting: { n: number; resolve: (b: Buffer | null) => void } | null = null;
  private done = false;

  constructor(private readonly s: Socket) {
    s.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.pump();
    });
    const end = (): void => {
      this.done = true;
      this.pump();
    };
    s.once('end', end);
    s.once('close', end);
    s.once('error', end);
  }

  read(n: number): Promise<Buffer | null> {
    return new Promise((resolve) => {
      this.waiting = { n, resolve };
      this.pump();
    });
  }

  /** stop reading; what was read ahead goes back into the socket */
  release(): Buffer {
    this.s.removeAllListeners('data');
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    return rest;
  }

  private pump(): void {
    const w = this.waiting;
    if (!w) return;
    if (this.buf.length >= w.n) {
      this.waiting = null;
      const out = this.buf.subarray(0, w.n);
      this.buf = this.buf.subarray(w.n);
      w.resolve(out);
    } else if (this.done) {
      this.waiting = null;
      w.resolve(null);
    }
  }
}

export async function serveSocks5(client: Socket, ctx: DialContext): Promise<void> {
  const timer = setTimeout(() => client.destroy(), HANDSHAKE_TIMEOUT_MS);
  const r = new Reader(client);
  try {
    const hello = await r.read(2);
    if (hello?.[0] !== 0x05) return void client.destroy();
    const methods = await r.read(hello[1]);
    if (!methods) return void client.destroy();
    if (!methods.includes(0x00)) {
      client.end(Buffer.from([0x05, 0xff])); // no acceptable method: only "no authentication" is offered
      return;
    }
    client.write(Buffer.from([0x05, 0x00]));
    const head = await r.read(4);
    if (head?.[0] !== 0x05) return void client.destroy();
    const cmd = head[1];
    let host: string;
    if (head[3] === 0x01) {
      const a = await r.read(4);
      if (!a) return void client.destroy();
      host = [...a].join('.');
    } else if (head[3] === 0x04) {
      const a = await r.read(16);
      if (!a) return void client.destroy();
      host = Array.from({ length: 8 }, (_, i) => a.readUInt16BE(i * 2).toString(16)).join(':');
    } else if (head[3] === 0x03) {
      const len = await r.read(1);
      const name = len && len[0] > 0 ? await r.read(len[0]) : null;
      if (!name) return void client.destroy();
      host = name.toString('latin1');
    } else {
      client.end(reply(0x08)); // address type not supported
      return;
    }
    const portBytes = await r.read(2);
    if (!portBytes) return void client.destroy();
    const port = portBytes.readUInt16BE(0);
    if (cmd !== 0x01) {
      const what = cmd === 0x03 ? 'SOCKS5 UDP ASSOCIATE' : cmd === 0x02 ? 'SOCKS5 BIND' : `SOCKS5 command ${cmd}`;
      await ctx.notify(deniedLine(host, port, `${what} is not supported by gate-sh's proxy (TCP CONNECT only)`));
      client.end(reply(0x07));
      return;
    }
    clearTimeout(timer);
    const up = await dial(host, port, 'socks5_tcp', ctx);
    if (!up.ok) {
      client.end(reply(up.socks));
      return;
    }
    if (client.destroyed) return up.done('the client went away'), void up.socket.destroy();
    const rest = r.release();
    client.write(reply(0x00));
    const refused = (why: string) => ctx.notify(deniedLine(host, port, why));
    runTunnel(client, up, { host: canonicalHost(host) ?? host, refused, relayed: ctx.relayed, pipes: ctx.bridgePipes?.() }, rest);
  } finally {
    clearTimeout(timer);
  }
}

