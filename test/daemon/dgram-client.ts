/**
 * A small request-channel client for the daemon's own load tests: a bound unix-dgram socket, EAGAIN
 * retried for up to 20 s (the daemon's queue is 10 datagrams deep and the test machine is shared), replies
 * matched by id, the same id resent when no reply comes within 10 s. Every reply is recorded so a test can
 * check that nothing was lost, duplicated or delivered to the wrong request.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { unixDgram } from '../../src/transport/dgram.js';
import { encode, decode } from '../../src/protocol/codec.js';
import { PROTOCOL_VERSION } from '../../src/protocol/messages.js';
import type { GatePaths } from '../../src/paths/paths.js';

export class TestClient {
  private readonly sock = unixDgram.createSocket('unix_dgram');
  private readonly path: string;
  private readonly waiting = new Map<string, (m: Record<string, any>) => void>();
  readonly stray: Record<string, any>[] = [];
  private seq = 0;

  constructor(private readonly paths: GatePaths) {
    this.path = join(paths.clientDir, `t-${randomBytes(4).toString('hex')}.sock`);
    this.sock.on('error', () => undefined);
    this.sock.on('message', (b: Buffer) => {
      const m = decode(b) as Record<string, any>;
      if (m.type === 'pending') return;
      const w = this.waiting.get(m.id);
      if (w) {
        this.waiting.delete(m.id);
        w(m);
      } else this.stray.push(m);
    });
    this.sock.bind(this.path);
  }

  private send(buf: Buffer, deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const attempt = (): void =>
        this.sock.send(buf, 0, buf.length, this.paths.requestSock, (err) => {
          if (!err) return resolve();
          if ((err as any).code === -11 && Date.now() < deadline) return void setTimeout(attempt, 2);
          reject(err);
        });
      attempt();
    });
  }

  async request(msg: Record<string, unknown>): Promise<Record<string, any>> {
    const id = `${this.path}#${++this.seq}`;
    const buf = encode({ ...msg, v: PROTOCOL_VERSION, id } as any);
    for (let attempt = 0; attempt < 3; attempt++) {
      const reply = new Promise<Record<string, any> | undefined>((resolve) => {
        const t = setTimeout(() => resolve(undefined), 10_000);
        this.waiting.set(id, (m) => (clearTimeout(t), resolve(m)));
      });
      await this.send(buf, Date.now() + 20_000);
      const r = await reply;
      if (r) return r;
    }
    throw new Error(`no reply to ${id}`);
  }

  close(): void {
    this.sock.close();
    try {
      unlinkSync(this.path);
    } catch {
      /* gone */
    }
  }
}
