/**
 * The bridge's listening socket, handed to the daemon (for throughput): the run's bridge
 * (shims/gate-netbridge.c) listens on 127.0.0.1:3128 inside the sandbox's network namespace and sends that
 * listening socket here, one byte with it (SCM_RIGHTS), on `<run folder>/listen.sock`. The run's proxy then
 * accepts the sandbox's connections itself: a tunnel's bytes go between the destination's socket and the
 * client's by the daemon's relay thread alone, with no bridge process and no Unix socket between them. The
 * answer is one byte: 'Y' taken (the bridge stops accepting), 'N' not (the bridge relays as before).
 * Not pure: a listening Unix socket and the native addon (recvmsg, the listener's checks).
 *
 * Trust boundary: what arrives is the sandboxed run's. A listener is taken only when the kernel says it is a
 * listening TCP socket bound to loopback in another network namespace than the daemon's (native
 * relayCheckListener): the sandbox's own, where only the run's processes connect (a listener of the host's
 * network the run inherited would let others in). Accepting on it gives the run nothing it did not have:
 * the same proxy, deciding each connection as the run's. Anything else is closed and refused.
 */
import { closeSync } from 'node:fs';
import { chmodSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { gateNative, type GateNative } from '../exec/index.js';

/** the byte the bridge sends with the listener, and the answers */
const HAND = 0x4c; // 'L'
const TAKEN = 'Y';
const REFUSED = 'N';
/** connections at once on the hand-over socket (a bridge makes one) */
const MAX_CONNECTIONS = 8;
const HANDSHAKE_TIMEOUT_MS = 10_000;

function native(): GateNative | null {
  try {
    const n = gateNative();
    return typeof n.relayCheckListener === 'function' ? n : null;
  } catch {
    return null;
  }
}

function closeQuiet(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* closed */
  }
}

export class ListenerHandoff {
  private readonly server: Server;
  private readonly n = native();

  /** `take(fd)`: adopt a checked listener (true), or not (false: the caller closed nothing; it is closed here) */
  constructor(
    private readonly path: string,
    private readonly take: (fd: number) => boolean,
    private readonly log: (line: string) => void,
  ) {
    this.server = createServer({ pauseOnConnect: true }, (s) => this.accept(s));
    this.server.maxConnections = MAX_CONNECTIONS;
  }

  /** false without the native addon: no listener can be received (the bridge relays as before) */
  get available(): boolean {
    return this.n !== null;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.path, () => {
        this.server.off('error', reject);
        chmodSync(this.path, 0o600);
        resolve();
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(s: Socket): void {
    const fd = (s as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    const n = this.n;
    s.on('error', () => s.destroy());
    if (!n || typeof fd !== 'number' || fd < 0) return void s.end(REFUSED);
    const started = Date.now();
    // the bridge sends at once after connecting: read natively (Node's reads drop descriptors), polled
    const poll = (): void => {
      if (s.destroyed) return;
      let got: { data: Buffer; fds: number[] } | null;
      try {
        got = n.recvFds(fd, 16);
      } catch {
        return void s.destroy();
      }
      if (got === null) {
        if (Date.now() - started > HANDSHAKE_TIMEOUT_MS) return void s.destroy();
        const waited = Date.now() - started;
        return void setTimeout(poll, waited < 20 ? 1 : 25);
      }
      const answer = this.adopt(got, n);
      s.end(answer);
      s.resume();
    };
    poll();
  }

  private adopt(got: { data: Buffer; fds: number[] }, n: GateNative): string {
    const [fd, ...more] = got.fds;
    more.forEach(closeQuiet);
    if (fd === undefined) return REFUSED;
    const why = got.data[0] !== HAND || more.length ? 'not one listener' : n.relayCheckListener(fd);
    if (why !== null) {
      this.log(`network: a listener handed over on ${this.path} refused: ${why}`);
      closeQuiet(fd);
      return REFUSED;
    }
    if (!this.take(fd)) {
      closeQuiet(fd);
      return REFUSED;
    }
    return TAKEN;
  }
}
