/** `gate log [--follow] [--json] [--run ID] [--kind K] [--decision D] [--since T] [-n N]`: read the audit log. */
import { parseArgs } from 'node:util';
import { closeSync, openSync, readSync, statSync, readFileSync } from 'node:fs';
import { gatePaths } from '../../protocol/paths.js';
import { loadConfig } from '../../config/load.js';
import { formatRecord, matches, parseRecords, parseSince, type AuditFilter } from '../../client/audit-query.js';
import type { AuditRecord } from '../../daemon/audit.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      follow: { type: 'boolean', short: 'f' },
      json: { type: 'boolean' },
      run: { type: 'string' },
      kind: { type: 'string' },
      decision: { type: 'string' },
      since: { type: 'string' },
      n: { type: 'string', short: 'n' },
      file: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: gate log [--follow] [--json] [--run ID] [--kind decision|exec|run|network|...] [--decision allow|deny|prompt|forbidden|Run|Deny|Escalate] [--since 10m|ISO] [-n N] [--file PATH]\n',
    );
    return 0;
  }
  const paths = gatePaths(process.env);
  const file = values.file ?? loadConfig({ file: paths.configFile, env: process.env }).audit_log ?? paths.auditLog;
  const filter: AuditFilter = { run: values.run, kind: values.kind, decision: values.decision, since: values.since ? parseSince(values.since) : undefined };
  const n = values.n !== undefined ? Number(values.n) : undefined;
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new Error(`invalid -n '${values.n}': expected a whole number`);
  const show = (r: AuditRecord): void => void process.stdout.write((values.json ? JSON.stringify(r) : formatRecord(r)) + '\n');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !values.follow) {
      process.stderr.write(`gate-sh: cannot read the audit log ${file}: ${(e as Error).message}\n`);
      return 1;
    }
  }
  let recs = parseRecords(text).filter((r) => matches(r, filter));
  if (n !== undefined) recs = recs.slice(Math.max(0, recs.length - n));
  recs.forEach(show);
  if (!values.follow) return 0;
  let offset = Buffer.byteLength(text);
  let partial = '';
  // Poll the size: simple, and it survives the file being created later.
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    let size = 0;
    try {
      size = statSync(file).size;
    } catch {
      continue;
    }
    if (size < offset) offset = 0; // truncated or replaced
    if (size === offset) continue;
    const fd = openSync(file, 'r');
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    closeSync(fd);
    offset = size;
    const chunk = partial + buf.toString('utf8');
    const cut = chunk.lastIndexOf('\n');
    partial = chunk.slice(cut + 1);
    parseRecords(chunk.slice(0, cut + 1)).filter((r) => matches(r, filter)).forEach(show);
  }
}
