/**
 * The audit log: one JSON line per decision and per run, appended by the daemon and, for the execs they
 * answer from a reused Run, by the runs' supervisors (`forWriter`; shims/gate-reuse.c writes each such line
 * with one write(2), of at most MAX_RECORD bytes). Every writer appends whole lines with one write(2) on an O_APPEND
 * descriptor, which a local filesystem does not interleave with another's, so a reader never sees a
 * partial line. Records are batched here: `write` queues a line, and `flush` appends every queued line at
 * once (looping over a short write), so the daemon's lines keep their order. The daemon flushes before each
 * reply leaves (a client that has its answer finds the record in the log); anything else written is
 * flushed on the next turn of the event loop, and on close.
 *
 * Bounded: a record is at most MAX_RECORD characters (a longer one, e.g. an 11 MB script's words, has its
 * long strings cut, marked `"cut":true`), and the log is rotated once it passes `maxBytes` (default 64 MiB):
 * renamed to `<log>.1` (replacing the older one) and started again. A supervisor that opened the log before
 * a rotation appends its reused-exec lines to `<log>.1` until its run ends.
 */
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { MAX_AUDIT_RECORD, type AuditRecord, type ReusedAudit } from '../protocol/index.js';


/** The longest record kept whole, in UTF-16 units of its encoded fields. */
export const MAX_RECORD = MAX_AUDIT_RECORD;
/** Strings in a cut record are kept to this many characters. */
const CUT_TO = 2048;

/** A record's encoded fields, with every string (and argv word) over CUT_TO cut, when they are too long. */
export function capFields(fields: string): string {
  if (fields.length <= MAX_RECORD) return fields;
  const cut = (v: unknown): unknown =>
    typeof v === 'string' && v.length > CUT_TO ? `${v.slice(0, CUT_TO)}… (${v.length} characters)` : Array.isArray(v) ? v.slice(0, 256).map(cut) : v;
  try {
    const rec = JSON.parse(`{${fields}}`) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rec)) out[k] = cut(v);
    if (Array.isArray(rec.argv) && rec.argv.length > 256) out.argv_length = rec.argv.length;
    out.cut = true;
    const text = JSON.stringify(out).slice(1, -1);
    return text.length <= MAX_RECORD ? text : `"kind":${JSON.stringify(rec.kind ?? 'record')},"cut":true,"detail":"a record of ${fields.length} characters"`;
  } catch {
    return `"cut":true,"detail":"a record of ${fields.length} characters"`;
  }
}

export class AuditLog {
  private fd: number;
  private size: number;
  private queued: string[] = [];
  private scheduled?: NodeJS.Immediate;
  /** one time stamp string per millisecond, not one Date + toISOString per record */
  private stamp = { ms: -1, iso: '' };
  private readonly sessionJson: string;
  private readonly scratch = Buffer.allocUnsafe(64 * 1024);

  constructor(
    readonly path: string,
    private readonly session: string,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {
    this.sessionJson = JSON.stringify(session);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
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
    const f = capFields(fields);
    this.queued.push(`{"time":"${this.now()}","session":${this.sessionJson}${f ? ',' : ''}${f}}`);
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
    this.size += n;
    if (this.size > this.maxBytes) this.rotate();
  }

  /** <log> becomes <log>.1 (the older one goes) and a new <log> is started. */
  private rotate(): void {
    try {
      renameSync(this.path, `${this.path}.1`);
      const fd = openSync(this.path, 'a', 0o600);
      closeSync(this.fd);
      this.fd = fd;
      this.size = 0;
    } catch (e) {
      this.size = 0; // tried: not again before another maxBytes
      process.stderr.write(`${new Date().toISOString()} audit log ${this.path}: cannot rotate: ${(e as Error).message}\n`);
    }
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
