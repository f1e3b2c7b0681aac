/**
 * The audit log: one JSON line per decision and per run, appended by the daemon and, for the execs they
 * answer from a reused Run, by the runs' supervisors (`forWriter`; shims/gate-reuse.c writes each such line
 * with one write(2) of at most a page). Every writer appends whole lines with one write(2) on an O_APPEND
 * descriptor, which a local filesystem does not interleave with another's, so a reader never sees a
 * partial line. Records are batched here: `write` queues a line, and `flush` appends every queued line at
 * once (looping over a short write), so the daemon's lines keep their order. The daemon flushes before each
 * reply leaves (a client that has its answer finds the record in the log); anything else written is
 * flushed on the next turn of the event loop, and on close.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ReusedAudit } from '../protocol/messages.js';

export interface AuditRecord {
  time: string;
  session: string;
  kind: 'decision' | 'exec' | 'run' | 'config' | 'reload' | 'daemon' | 'job';
  run_id?: string;
  cwd?: string;
  argv?: string[];
  /** rule "file:line" or "heuristic:<name>" or "session" */
  source?: string;
  decision?: string;
  action?: string;
  execution?: string;
  approval_id?: string;
  approver?: string;
  answer?: string;
  exit_status?: number;
  duration_ms?: number;
  detail?: string;
  /** 'start-up': an exec of the login profile or rc files, before the script's first command */
  phase?: string;
  /** an exec the run's supervisor answered with a Run the daemon gave for that program before
   * (src/daemon/reuse-grants.ts) */
  reused?: boolean;
}

export class AuditLog {
  private fd: number;
  private queued: string[] = [];
  private scheduled?: NodeJS.Immediate;
  /** one time stamp string per millisecond, not one Date + toISOString per record */
  private stamp = { ms: -1, iso: '' };
  private readonly sessionJson: string;
  private readonly scratch = Buffer.allocUnsafe(64 * 1024);

  constructor(
    readonly path: string,
    private readonly session: string,
  ) {
    this.sessionJson = JSON.stringify(session);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
  }

  /**
   * What a writer outside the daemon needs to append a record itself: this log's path, and the record's
   * encoded fields around the ones it adds (`head` follows the time stamp and starts with the session).
   */
  forWriter(head: string, tail: string): ReusedAudit {
    return { log: this.path, head: `"session":${this.sessionJson},${head}`, tail };
  }

  write(rec: Omit<AuditRecord, 'time' | 'session'>): void {
    this.writeEncoded(JSON.stringify(rec).slice(1, -1));
  }

  /**
   * A record whose fields are already JSON (`"kind":"exec","run_id":"r-1",…`, the object without its
   * braces): the daemon encodes the fields that never change for a cached check once, not per decision.
   */
  writeEncoded(fields: string): void {
    if (this.fd < 0) return; // closed at shutdown: a late decision is not worth a crash
    this.queued.push(`{"time":"${this.now()}","session":${this.sessionJson}${fields ? ',' : ''}${fields}}`);
    this.scheduled ??= setImmediate(() => {
      try {
        this.flush();
      } catch (e) {
        // nobody to hand the error to on this path: say so in the daemon's log rather than crash it
        process.stderr.write(`${new Date().toISOString()} audit log ${this.path}: ${(e as Error).message}\n`);
      }
    });
  }

  /** Append every queued record now (one write); throws when the log cannot be written (the records are lost). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.fd < 0 || this.queued.length === 0) return;
    const text = this.queued.join('\n') + '\n';
    this.queued = [];
    // encoded into a reused buffer when it surely fits (≤ 3 bytes per UTF-16 unit): no allocation per flush
    const fits = text.length * 3 <= this.scratch.length;
    const buf = fits ? this.scratch : Buffer.from(text, 'utf8');
    const n = fits ? this.scratch.write(text, 0, 'utf8') : buf.length;
    for (let off = 0; off < n; ) off += writeSync(this.fd, buf, off, n - off);
  }

  close(): void {
    if (this.fd < 0) return;
    this.flush();
    closeSync(this.fd);
    this.fd = -1;
  }

  private now(): string {
    const ms = Date.now();
    if (ms !== this.stamp.ms) this.stamp = { ms, iso: new Date(ms).toISOString() };
    return this.stamp.iso;
  }
}
