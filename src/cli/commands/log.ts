/** `gate log [--follow] [--json] [--run ID] [--decision D] [--since T] [-n N]`: read the audit log (options:
 * src/cli/args/log.ts). Not pure: reads the log file. */
import { closeSync, openSync, readSync, statSync, readFileSync } from 'node:fs';
import { gatePaths } from '../../paths/index.js';
import { loadConfig } from '../../config/index.js';
import { type AuditFilter, formatRecord, matches, parseRecords } from '../../client/index.js';
import type { AuditRecord } from '../../protocol/index.js';

/** Options, as src/cli/args/log.ts declares them (since: epoch ms). */
export interface LogArgs {
  follow: boolean;
  json: boolean;
  run?: string;
  /** a record kind (network: the proxy's connection decisions) */
  kind?: string;
  decision?: string;
  since?: number;
  n?: number;
  file?: string;
}

export async function run(values: LogArgs): Promise<number> {
  const paths = gatePaths(process.env);
  const file = values.file ?? loadConfig({ file: paths.configFile, env: process.env }).audit_log ?? paths.auditLog;
  const filter: AuditFilter = { run: values.run, kind: values.kind, decision: values.decision, since: values.since };
  const n = values.n;
  const show = (r: AuditRecord): void => void process.stdout.write((values.json ? JSON.stringify(r) : formatRecord(r)) + '\n');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      process.stderr.write(`gate: cannot read the audit log ${file}: ${(e as Error).message}\n`);
      return 1;
    }
    // a fresh install: an empty log, said so (a mistyped audit_log path shows here too); --follow waits for it
    if (!values.follow) {
      process.stderr.write(`gate: log: no audit log at ${file} yet (nothing has been decided since it was set)\n`);
      return 0;
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
