/**
 * Client of the approval channel (JSON lines over approval.sock): used by `gate approve`, `gate status`,
 * `gate config`, `gate daemon stop|status`, the interactive shell and the MCP/host integrations. Requests
 * carry `re` so replies can be matched; events (prompt, resolved) go to onEvent. The messages are typed in
 * src/protocol/approval.ts; a line that is not JSON is skipped.
 */
import { createConnection, type Socket } from 'node:net';
import type { GatePaths } from '../paths/index.js';
import type { ApprovalEvent, ApprovalLine, ApprovalOp, ApprovalReplies, ApprovalRequests } from '../protocol/index.js';

export class ApprovalClient {
  private buf = '';
  private seq = 0;
  private readonly waiting = new Map<number, (l: ApprovalLine) => void>();
  onEvent: (e: ApprovalEvent) => void = () => undefined;
  onClose: () => void = () => undefined;

  private constructor(private readonly sock: Socket) {
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      this.buf += chunk;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        let o: ApprovalLine;
        try {
          o = JSON.parse(line) as ApprovalLine;
        } catch {
          continue;
        }
        const w = typeof o.re === 'number' ? this.waiting.get(o.re) : undefined;
        if (w) {
          this.waiting.delete(o.re as number);
          w(o);
        } else this.onEvent(o as ApprovalEvent);
      }
    });
    sock.on('close', () => {
      for (const w of this.waiting.values()) w({ type: 'error', message: 'the gate daemon closed the approval channel' });
      this.waiting.clear();
      this.onClose();
    });
  }

  static connect(paths: GatePaths): Promise<ApprovalClient> {
    return new Promise((resolve, reject) => {
      const s = createConnection(paths.approvalSock);
      s.once('connect', () => {
        s.removeAllListeners('error');
        s.on('error', () => s.destroy());
        resolve(new ApprovalClient(s));
      });
      s.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new Error(
            e.code === 'ENOENT' || e.code === 'ECONNREFUSED'
              ? `the gate daemon is not running for session '${paths.session}' (no answer at ${paths.approvalSock}); start it with 'gate daemon start'`
              : `cannot reach the gate daemon at ${paths.approvalSock}: ${e.message}`,
          ),
        ),
      );
    });
  }

  /** Send one request and wait for its reply; an `error` reply rejects. */
  call<O extends ApprovalOp>(op: O, fields?: ApprovalRequests[O]): Promise<ApprovalReplies[O]> {
    const re = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(re, (l) => (l.type === 'error' ? reject(new Error(String(l.message))) : resolve(l as ApprovalReplies[O])));
      this.sock.write(JSON.stringify({ ...fields, op, re }) + '\n');
    });
  }

  close(): void {
    this.sock.end();
  }
}

/** Connect, call once, close. */
export async function approvalCall<O extends ApprovalOp>(paths: GatePaths, op: O, fields?: ApprovalRequests[O]): Promise<ApprovalReplies[O]> {
  const c = await ApprovalClient.connect(paths);
  try {
    return await c.call(op, fields);
  } finally {
    c.close();
  }
}
