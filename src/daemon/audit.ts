/**
 * The audit log: one JSON line per decision and per run, appended by the daemon alone (single writer).
 * Each record is one write(2) on an O_APPEND descriptor, so a reader never sees a partial line from us and a
 * crash can at worst lose the record being written, never corrupt earlier ones.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface AuditRecord {
  time: string;
  session: string;
  kind: 'decision' | 'exec' | 'run' | 'config' | 'reload' | 'daemon';
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
}

export class AuditLog {
  private fd: number;

  constructor(
    readonly path: string,
    private readonly session: string,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
  }

  write(rec: Omit<AuditRecord, 'time' | 'session'>): void {
    if (this.fd < 0) return; // closed at shutdown: a late decision is not worth a crash
    const line = JSON.stringify({ time: new Date().toISOString(), session: this.session, ...rec }) + '\n';
    writeSync(this.fd, line);
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
