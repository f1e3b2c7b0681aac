/**
 * One new connection through the proxy, whatever the client's protocol: decide the host:port with the
 * daemon's NetworkDecider, resolve the name (only after an allow: a denied name is never looked up),
 * refuse local ranges no rule names, connect to the resolved addresses only, and report the connection
 * when it closes (bytes up and down). The protocol fronts (http-front.ts, socks5.ts) turn a refusal into
 * their own reply. Not pure: DNS and TCP.
 *
 * Trust boundary: host and port come from the sandboxed client (untrusted: normalised and checked here);
 * the run is the one whose socket the connection came in on (proxy.ts), never a value the client sent.
 */
import { connect, isIP, type Socket } from 'node:net';
import { normalizeHost } from '../rules/index.js';
import { localRange } from './address-ranges.js';
import type { Resolver } from './resolve.js';
import type { ConnectionRequest, ConnectionDecision, NetworkDecider, NetworkProtocol } from './types.js';

const CONNECT_TIMEOUT_MS = 10_000;

export interface DialContext {
  runId: string;
  decider: NetworkDecider;
  resolve: Resolver;
  /** a line for the run's stderr (`gate-sh: network: denied ...`), through its bridge; resolves once the
   *  bridge says it is there (or could not): the client's refusal goes after it, never before */
  notify(line: string): Promise<void> | void;
  /** aborted when the client went away (a decision waiting for a person is withdrawn) */
  signal: AbortSignal;
  /** a tunnel's bytes were handed to the native relay (relay.ts): the run's proxy ends it with the run */
  relayed?(id: number, finished: Promise<unknown>): void;
  /** whether the run's bridge takes a tunnel's bytes through pipes (it said so on its notice connection) */
  bridgePipes?(): boolean;
}

/** Why the proxy did not connect: `status` is the HTTP status a front answers with. */
export interface Refusal {
  ok: false;
  status: 400 | 403 | 502;
  /** SOCKS5 reply code (RFC 1928 §6): 2 not allowed by ruleset, 4 host unreachable, 5 refused, 1 failure */
  socks: 1 | 2 | 4 | 5;
  reason: string;
}

export interface Dialed {
  ok: true;
  socket: Socket;
  /** call once when the connection is over: reports it to the decider; `more`: bytes carried past Node
   *  (the native relay's), added to what the socket counted */
  done(error?: string, more?: { up: number; down: number }): void;
}

/** The canonical host of a client's request, or null when it cannot be one. */
export function canonicalHost(raw: string): string | null {
  try {
    const h = normalizeHost(raw.includes(':') && !raw.startsWith('[') ? `[${raw}]` : raw);
    return h.includes('%') ? null : h; // an IPv6 zone names an interface of the proxy's machine, not a host
  } catch {
    return null;
  }
}

/** The line on the run's stderr for a refusal. */
export function deniedLine(host: string, port: number, reason: string): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return `gate-sh: network: denied ${shown}:${port}: ${reason.replace(/[\x00-\x1f\x7f]/g, ' ')}`;
}

export async function dial(rawHost: string, port: number, protocol: NetworkProtocol, ctx: DialContext): Promise<Dialed | Refusal> {
  const host = canonicalHost(rawHost);
  if (host === null || !Number.isInteger(port) || port < 1 || port > 65535)
    return { ok: false, status: 400, socks: 1, reason: `not a host and port: ${JSON.stringify(rawHost)}:${port}` };
  const literal = isIP(host) !== 0;
  const request: ConnectionRequest = { runId: ctx.runId, host, port, protocol, addresses: literal ? [host] : [] };
  const started = Date.now();
  let decided: ConnectionDecision;
  try {
    decided = await ctx.decider.decide(request, ctx.signal);
  } catch (e) {
    decided = { decision: 'deny', reason: `the decision failed: ${(e as Error).message}`, source: 'default' };
  }
  const report = (error: string | undefined, up = 0, down = 0): void => {
    try {
      ctx.decider.closed({ request, decided, bytesUp: up, bytesDown: down, durationMs: Date.now() - started, ...(error ? { error } : {}) });
    } catch {
      /* the report is the decider's: a failure there does not touch the connection */
    }
  };
  const refuse = async (status: Refusal['status'], socks: Refusal['socks'], reason: string, error?: string): Promise<Refusal> => {
    report(error);
    await ctx.notify(deniedLine(host, port, reason));
    return { ok: false, status, socks, reason };
  };
  if (decided.decision !== 'allow') return refuse(403, 2, decided.reason);
  if (ctx.signal.aborted) return refuse(403, 2, 'the client went away', 'the client went away');
  let addresses: string[];
  if (literal) addresses = [host];
  else {
    try {
      addresses = await ctx.resolve(host);
    } catch (e) {
      const why = `cannot resolve ${host}: ${(e as Error).message}`;
      return refuse(502, 4, why, why);
    }
  }
  request.addresses = addresses;
  for (const a of addresses) {
    const range = localRange(a);
    if (range !== null && !decided.namesHost && !ctx.resolve.asPublic?.(host)) {
      const why = literal ? `${host} is a ${range} address, which no rule names` : `${host} resolves to ${a} (${range}), which no rule names`;
      return refuse(403, 2, why, why);
    }
  }
  let socket: Socket | undefined;
  let lastError = '';
  for (const a of addresses) {
    try {
      socket = await connectTo(a, port, ctx.signal);
      break;
    } catch (e) {
      lastError = (e as Error).message;
    }
  }
  if (!socket) {
    const why = `cannot connect to ${host}:${port}: ${lastError}`;
    report(why);
    return { ok: false, status: 502, socks: lastError.includes('ECONNREFUSED') ? 5 : 4, reason: why };
  }
  const s = socket;
  let reported = false;
  return {
    ok: true,
    socket: s,
    done(error?: string, more?: { up: number; down: number }) {
      if (reported) return;
      reported = true;
      report(error, s.bytesWritten + (more?.up ?? 0), s.bytesRead + (more?.down ?? 0));
    },
  };
}

function connectTo(address: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: address, port, noDelay: true, allowHalfOpen: true });
    const fail = (e: Error): void => {
      cleanup();
      s.destroy();
      reject(e);
    };
    const onAbort = (): void => fail(new Error('the client went away'));
    const timer = setTimeout(() => fail(new Error('timed out')), CONNECT_TIMEOUT_MS);
    const cleanup = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      s.off('error', fail);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    s.once('error', fail);
    s.once('connect', () => {
      cleanup();
      resolve(s);
    });
  });
}
