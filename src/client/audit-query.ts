/** Reading the audit log: parse, filter, and show records (pure; `gate log` does the I/O). */
import type { AuditRecord } from '../protocol/index.js';
import { displayWord } from '../text/index.js';

export interface AuditFilter {
  run?: string;
  /** a record kind: decision, exec, run, network, ... */
  kind?: string;
  decision?: string;
  /** epoch ms */
  since?: number;
}

/** "2026-01-01T00:00:00Z", or a relative age: 30s, 10m, 2h, 1d. */
export function parseSince(v: string, now = Date.now()): number {
  const m = /^(\d+)([smhd])$/.exec(v);
  if (m) return now - Number(m[1]) * { s: 1e3, m: 6e4, h: 36e5, d: 864e5 }[m[2] as 's' | 'm' | 'h' | 'd'];
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new Error(`invalid --since '${v}': use an ISO time or an age like 30s, 10m, 2h, 1d`);
  return t;
}

export function parseRecords(text: string): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as AuditRecord);
    } catch {
      /* a line cut by a crash of an older writer: skip it */
    }
  }
  return out;
}

export function matches(r: AuditRecord, f: AuditFilter): boolean {
  if (f.run && r.run_id !== f.run) return false;
  if (f.kind && r.kind !== f.kind) return false;
  if (f.decision && r.decision !== f.decision && !(r.action ?? '').toLowerCase().startsWith(f.decision.toLowerCase())) return false;
  if (f.since !== undefined && Date.parse(r.time) < f.since) return false;
  return true;
}

/** One table row: time, kind, run, decision, action, source, command. */
export function formatRecord(r: AuditRecord): string {
  const time = r.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const words = r.argv ? r.argv.map(displayWord).join(' ') : undefined; // as every approval surface shows a command
  // a job record (session sandboxes) says what happened to the job: started, ended with its status
  const job =
    r.kind === 'job' && words ? `${(r.detail ?? '').split(':')[0]}${r.exit_status !== undefined ? ` (exit ${r.exit_status})` : ''}: ${words}` : undefined;
  const what = r.kind === 'run' ? `exit ${r.exit_status} in ${r.duration_ms} ms` : r.kind === 'network' ? networkWhat(r) : (job ?? words ?? r.detail ?? '');
  const approval = r.approver ? ` [${r.answer} by ${r.approver}]` : '';
  const cols = [time, r.kind.padEnd(8), (r.run_id ?? '-').padEnd(14), (r.decision ?? '-').padEnd(9), (r.action ?? '-').padEnd(12), (r.source ?? '-')];
  const line = `${cols.join('  ')}  ${what}${approval}`;
  return line.length > 400 ? `${line.slice(0, 399)}…` : line;
}

/** A network record's text: where to, then why (a decision) or what it carried (a closed connection). */
function networkWhat(r: AuditRecord): string {
  const to = `${r.protocol ?? '?'} ${r.host?.includes(':') ? `[${r.host}]` : r.host}:${r.port}`;
  if (r.detail === 'closed')
    return `${to} closed: ${r.bytes_up ?? 0} B up, ${r.bytes_down ?? 0} B down in ${r.duration_ms ?? 0} ms${r.error ? `; ${r.error}` : ''}`;
  return `${to}: ${r.detail ?? ''}${r.rule ? ` (${r.rule})` : ''}`;
}
