/**
 * The HTTP front of the proxy: plain HTTP forwarded (absolute-form `GET http://host/path`) and HTTP
 * CONNECT tunnels, on node:http's parser. A refusal is an HTTP answer: 403 (denied, or a local range no
 * rule names), 502 (the name does not resolve, the destination cannot be reached), 400 (not a proxy
 * request), with the reason as the body and in an `X-Gate-Sh-Reason` header.
 *
 * Headers are not rewritten: a forwarded request goes with the client's header lines as sent, in their
 * order (Host included); only the request line goes to origin form (`GET /path`), as a proxy must. Node's
 * client adds `Connection: close` when the client sent no Connection header (one upstream connection per
 * request), and the answer's framing headers (Connection, Keep-Alive, Transfer-Encoding) are this hop's, as
 * HTTP/1.1 has them. A Host header naming another host than the request line is refused (plain-HTTP
 * fronting: the server would route by the Host header). Upgrades (WebSocket over plain http) are not
 * forwarded; `wss://` goes through CONNECT.
 * Not pure: sockets. Trust boundary: the request comes from the sandboxed client (untrusted).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { canonicalHost, deniedLine, dial, type DialContext, type Refusal } from './dial.js';
import { runTunnel } from './tunnel.js';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 502: 'Bad Gateway' };

/** The reason as a header value: printable ASCII only. */
function headerSafe(reason: string): string {
  return reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 1000);
}

function body(reason: string): string {
  return `gate-sh: network: ${reason}\n`;
}

export type ContextFor = (signal: AbortSignal) => DialContext;

/** An http.Server that is never listened on: the proxy hands it the sockets it sniffed as HTTP. */
export function httpFront(contextFor: ContextFor): Server {
  const server = createServer({ requireHostHeader: false });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void forward(req, res, contextFor));
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => void tunnel(req, socket, head, contextFor));
  server.on('clientError', (_e, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

function refuseResponse(res: ServerResponse, status: number, reason: string): void {
  const text = body(reason);
  res.writeHead(status, STATUS_TEXT[status], {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Gate-Sh-Reason': headerSafe(reason),
  });
  res.end(text);
}

/** The client went away: withdraw what waits for it (a prompt for a person, a connect). */
function abortOnClose(socket: Socket): AbortController {
  const ac = new AbortController();
  socket.once('close', () => ac.abort());
  return ac;
}

async function forward(req: IncomingMessage, res: ServerResponse, contextFor: ContextFor): Promise<void> {
  const ac = abortOnClose(req.socket);
  const ctx = contextFor(ac.signal);
  let url: URL;
  try {
    url = new URL(req.url ?? '');
  } catch {
    url = new URL('invalid:');
  }
  if (url.protocol !== 'http:' || !url.hostname) {
    const why = url.protocol === 'https:' ? 'https:// goes through CONNECT, not as a plain request' : 'the proxy takes absolute-form http:// requests only';
    return refuseResponse(res, 400, why);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : 80;
  // the Host header must name the request line's host (a server routes by it: plain-HTTP fronting)
  const hostHeader = req.headers.host;
  if (hostHeader !== undefined && !sameAuthority(hostHeader, host, port)) {
    const why = `the Host header names ${hostHeader}, not the requested ${url.host} (no fronting)`;
    ctx.notify(deniedLine(canonicalHost(host) ?? host, port, why));
    return refuseResponse(res, 403, why);
  }
  const up = await dial(host, port, 'http', ctx);
  if (!up.ok) return refuseResponse(res, up.status, up.reason);
  const out = httpRequest({
    createConnection: () => up.socket,
    method: req.method,
    path: url.pathname + url.search,
    headers: req.rawHeaders,
    setHost: false,
  });
  out.on('response', (answer) => {
    res.sendDate = false;
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
    answer.pipe(res);
    answer.on('end', () => up.done());
    answer.on('error', (e) => (up.done(e.message), res.destroy()));
  });
  out.on('error', (e) => {
    up.done(e.message);
    if (!res.headersSent) refuseResponse(res, 502, `${host}:${port}: ${e.message}`);
    else res.destroy();
  });
  res.on('close', () => {
    up.done();
    up.socket.destroy();
  });
  req.pipe(out);
}

/** `host:port` of a Host header against the request's (default port 80 for plain http). */
function sameAuthority(header: string, host: string, port: number): boolean {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header.trim());
  if (!m) return false;
  const h = canonicalHost(m[1].replace(/^\[|\]$/g, ''));
  return h !== null && h === canonicalHost(host) && (m[2] ? Number(m[2]) : 80) === port;
}

async function tunnel(req: IncomingMessage, socket: Socket, head: Buffer, contextFor: ContextFor): Promise<void> {
  const ac = abortOnClose(socket);
  const ctx = contextFor(ac.signal);
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
  const refuse = (r: Pick<Refusal, 'status' | 'reason'>): void => {
    const text = body(r.reason);
    socket.end(
      `HTTP/1.1 ${r.status} ${STATUS_TEXT[r.status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `X-Gate-Sh-Reason: ${headerSafe(r.reason)}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
  if (!m) return refuse({ status: 400, reason: `CONNECT needs host:port, not ${JSON.stringify(req.url)}` });
  const host = m[1].replace(/^\[|\]$/g, '');
  const port = Number(m[2]);
  const up = await dial(host, port, 'https', ctx);
  if (!up.ok) return refuse(up);
  if (socket.destroyed) {
    up.done('the client went away');
    up.socket.destroy();
    return;
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  const refused = (why: string) => ctx.notify(deniedLine(host, port, why));
  runTunnel(socket, up, { host: canonicalHost(host) ?? host, refused, relayed: ctx.relayed, pipes: ctx.bridgePipes?.() }, head);
}
