/**
 * A JSON-RPC 2.0 peer over newline-delimited JSON (one message per line) on a pair of streams. Both sides may
 * send requests: incoming requests go to `handlers` (a thrown RpcError becomes its error object), responses
 * to our requests resolve `request()`. Malformed input is answered with the standard error codes.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** the gate daemon could not do it (not running, refused the change) */
export const DAEMON_ERROR = -32000;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export type Handler = (params: unknown) => unknown;

type Id = number | string;
interface Waiter {
  resolve(v: unknown): void;
  reject(e: RpcError): void;
}

const MAX_LINE = 1 << 20;

export class JsonRpcPeer {
  private seq = 0;
  private readonly waiting = new Map<Id, Waiter>();
  onClose: () => void = () => undefined;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly handlers: Record<string, Handler>,
  ) {
    const rl = createInterface({ input, crlfDelay: Infinity });
    rl.on('line', (line) => this.onLine(line));
    rl.on('close', () => {
      for (const w of this.waiting.values()) w.reject(new RpcError(INTERNAL_ERROR, 'connection closed'));
      this.waiting.clear();
      this.onClose();
    });
  }

  /** Send a request; resolves with its result, rejects with the peer's error. */
  request(method: string, params: unknown): { id: number; result: Promise<unknown> } {
    const id = ++this.seq;
    const result = new Promise<unknown>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.send({ jsonrpc: '2.0', id, method, params });
    return { id, result };
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  private send(o: Record<string, unknown>): void {
    if (this.output.writable) this.output.write(JSON.stringify(o) + '\n');
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    if (line.length > MAX_LINE) return this.send({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: `line over ${MAX_LINE} bytes` } });
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return this.send({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'parse error: each line must be one JSON-RPC 2.0 message' } });
    }
    const id = m && typeof m === 'object' && !Array.isArray(m) ? m.id : undefined;
    const validId = typeof id === 'number' || typeof id === 'string';
    if (!m || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0')
      return this.send({
        jsonrpc: '2.0',
        id: validId ? id : null,
        error: { code: INVALID_REQUEST, message: 'invalid request: expected a JSON-RPC 2.0 object (batches are not supported)' },
      });
    if (typeof m.method === 'string') return void this.onRequest(m.method, m.params, validId ? (id as Id) : undefined, 'id' in m && !validId);
    if (validId && this.waiting.has(id as Id)) {
      const w = this.waiting.get(id as Id)!;
      this.waiting.delete(id as Id);
      const err = m.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
      if (err && typeof err === 'object')
        w.reject(new RpcError(typeof err.code === 'number' ? err.code : INTERNAL_ERROR, String(err.message ?? 'error'), err.data));
      else w.resolve(m.result);
      return;
    }
    this.send({
      jsonrpc: '2.0',
      id: validId ? id : null,
      error: { code: INVALID_REQUEST, message: `invalid request: no method, and no request of ours has id ${JSON.stringify(id)}` },
    });
  }

  private async onRequest(method: string, params: unknown, id: Id | undefined, badId: boolean): Promise<void> {
    if (badId) return this.send({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'invalid request: id must be a number or a string' } });
    const h = Object.hasOwn(this.handlers, method) ? this.handlers[method] : undefined;
    if (!h) {
      if (id !== undefined)
        this.send({
          jsonrpc: '2.0',
          id,
          error: { code: METHOD_NOT_FOUND, message: `method not found: ${method} (methods: ${Object.keys(this.handlers).join(', ')})` },
        });
      return;
    }
    try {
      const result = await h(params);
      if (id !== undefined) this.send({ jsonrpc: '2.0', id, result: result ?? {} });
    } catch (e) {
      if (id === undefined) return; // a notification gets no answer, even a failed one
      const err = e instanceof RpcError ? e : new RpcError(INTERNAL_ERROR, e instanceof Error ? e.message : String(e));
      this.send({ jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) } });
    }
  }
}
