/**
 * The hand-over of an open tunnel's bytes to the native relay (native/gate_relay.c): once a CONNECT or
 * SOCKS5 tunnel is decided, connected and its TLS server name checked (tunnel.ts), the two sockets leave
 * Node's event loop and one thread of the daemon splices between them; Node hears once when the pair is
 * over, with the bytes each way (the audit record's). Without the addon the tunnel stays piped in Node.
 * Not pure: sockets and the addon.
 *
 * Trust boundary: both sockets are the daemon's own (the Unix socket it accepted from the run's bridge, the
 * TCP socket it connected). Neither is ever sent into the sandbox: a connected host-side TCP socket there
 * could be disconnected (connect with AF_UNSPEC) and connected anywhere, past every rule. What the bridge
 * is handed is two pipes, which carry bytes and nothing else.
 */
import type { Socket } from 'node:net';
import { gateNative, type GateNative } from '../exec/index.js';

/** What a relayed pair carried once it was handed over (heads included), and why it ended if not cleanly. */
export interface Relayed {
  up: number;
  down: number;
  error?: string;
}

export interface HandedOver {
  id: number;
  /** bytes Node had read from the destination and not written (counted by Node as read already) */
  headDown: number;
  finished: Promise<Relayed>;
}

interface RelayState {
  n: GateNative;
  waiting: Map<number, (r: Relayed) => void>;
}

let state: RelayState | null | undefined;

/** The relay, started on first use; null when there is none (no addon, no thread, or turned off). */
function relay(): RelayState | null {
  if (state !== undefined) return state;
  state = null;
  // a way to measure and test the Node path: GATE_NET_RELAY=node keeps every tunnel in Node
  if (process.env.GATE_NET_RELAY === 'node') return state;
  try {
    const n = gateNative();
    const waiting = new Map<number, (r: Relayed) => void>();
    const ok = n.relayInit((id, up, down, error) => {
      const w = waiting.get(id);
      waiting.delete(id);
      w?.({ up, down, ...(error ? { error } : {}) });
    });
    if (ok) state = { n, waiting };
  } catch {
    /* no addon: tunnels stay in Node */
  }
  return state;
}

function fdOf(s: Socket): number | undefined {
  const fd = (s as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Everything the stream read and has not handed out (its 'data' listeners must be gone). */
function drain(s: Socket): Buffer | null {
  const parts: Buffer[] = [];
  for (let c = s.read() as Buffer | null; c !== null; c = s.read() as Buffer | null) parts.push(c);
  return parts.length ? Buffer.concat(parts) : null;
}

/** Until neither socket has bytes of Node's own still to write. */
async function flushed(a: Socket, b: Socket): Promise<void> {
  for (const s of [a, b]) {
    while (s.writableLength > 0 && !s.destroyed) await new Promise<void>((r) => (s.once('drain', r), s.once('close', r)));
  }
}

/** The relay and both sockets' descriptors once Node has written what it holds; null when there is no
 * relay or either socket is gone or has no descriptor (the caller then carries the bytes itself). */
async function readyPair(client: Socket, dest: Socket): Promise<{ r: NonNullable<ReturnType<typeof relay>>; cfd: number; dfd: number } | null> {
  const r = relay();
  if (!r) return null;
  await flushed(client, dest);
  // from here to the caller's destroys, one synchronous block: Node reads nothing more meanwhile
  const cfd = fdOf(client);
  const dfd = fdOf(dest);
  if (client.destroyed || dest.destroyed || cfd === undefined || dfd === undefined) return null;
  return { r, cfd, dfd };
}

/**
 * Hand `client` and `dest` to the relay: both paused with no 'data' listeners (what they buffered goes
 * first). `pipes`: the client is the run's bridge and takes pipes (it said so, run-proxy.ts): the relay
 * hands it a pipe each way over the client socket, and the bytes skip the Unix socket from then on.
 * Resolves null, touching nothing, when there is no relay or either socket is gone or has no
 * descriptor: the caller pipes them itself. Otherwise both Node sockets are destroyed (their descriptors
 * closed; the relay holds its own copies) and `finished` resolves when the pair is over.
 */
export async function handOver(client: Socket, dest: Socket, o: { pipes?: boolean } = {}): Promise<HandedOver | null> {
  const ready = await readyPair(client, dest);
  if (!ready) return null;
  const { r, cfd, dfd } = ready;
  const headUp = drain(client);
  const headDown = drain(dest);
  let id: number;
  try {
    id = r.n.relayAdd(cfd, dfd, headUp, headDown, o.pipes === true);
  } catch {
    if (headUp) client.unshift(headUp);
    if (headDown) dest.unshift(headDown);
    return null;
  }
  const finished = new Promise<Relayed>((resolve) => r.waiting.set(id, resolve));
  client.destroy();
  dest.destroy();
  return { id, headDown: headDown?.length ?? 0, finished };
}

/**
 * Hand one plain-HTTP answer's body to the relay (http-front.ts): `dest` (the upstream connection, whose
 * answer head Node has read and sent) is handed over; `client` is not: the relay writes the body to a copy
 * of its descriptor while Node keeps reading the client (its next request). `head`: body bytes Node read
 * already (sent first; `dest` is paused with no 'data' listener); `length`: the whole body, or null for an answer that ends with the
 * connection (the client's side is then shut when it does). Resolves null, touching nothing, when there
 * is no relay: the caller carries the body itself. Otherwise Node's `dest` is destroyed; once `finished`
 * resolves without an error, the relay has let go of the client and Node may write to it again.
 */
export async function relayAnswer(client: Socket, dest: Socket, head: Buffer | null, length: number | null): Promise<HandedOver | null> {
  const ready = await readyPair(client, dest);
  if (!ready) return null;
  const { r, cfd, dfd } = ready;
  // what the stream buffered after its 'data' listeners went (paused) is the body's too; past `length`,
  // bytes the server should not have sent, dropped with the connection
  const more = drain(dest);
  if (more) head = head ? Buffer.concat([head, more]) : more;
  if (head && length !== null && head.length > length) head = head.subarray(0, length);
  const rest = length === null ? -1 : length - (head?.length ?? 0);
  let id: number;
  try {
    id = r.n.relayAdd(cfd, dfd, null, head?.length ? head : null, false, 0, rest);
  } catch {
    return null;
  }
  const finished = new Promise<Relayed>((resolve) => r.waiting.set(id, resolve));
  dest.destroy();
  return { id, headDown: head?.length ?? 0, finished };
}

/** End a relayed pair (its run finished); its `finished` still resolves. */
export function closeRelayed(id: number): void {
  state?.n.relayClose(id);
}
