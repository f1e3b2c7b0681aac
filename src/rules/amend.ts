/**
 * Amendments: append `prefix_rule(pattern=[...], decision="allow")` (or a network_rule) to a rules file in
 * Codex's exact format, deduplicated, under an exclusive lock.
 *
 * Locking: Node has no flock(2), so the lock is taken by flock(1) (util-linux) on a file descriptor that
 * we pass to it. flock locks belong to the open file description, which the child shares with us, so the
 * lock stays held by our descriptor after flock(1) exits and is released when we close it — or by the
 * kernel if we die, so there are no stale lock files. It is the same advisory lock Codex takes on the same
 * file, so gate-sh and Codex appending at once also serialise.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import { tokenize } from './starlark/lexer.js';
import { PolicyError } from './error.js';
import type { Decision } from './decision.js';
import { parsePolicy } from './parser.js';


export function formatAllowPrefixRule(prefix: string[]): string {
  return `prefix_rule(pattern=[${prefix.map((t) => JSON.stringify(t)).join(', ')}], decision="allow")`;
}

/** A prefix rule with any decision and an optional justification, in the amendment format (`gate rules add`). */
export function formatPrefixRule(prefix: string[], decision: Decision, justification?: string): string {
  const j = justification !== undefined ? `, justification=${JSON.stringify(justification)}` : '';
  return `prefix_rule(pattern=[${prefix.map((t) => JSON.stringify(t)).join(', ')}], decision="${decision}"${j})`;
}

export interface NetworkAmendment {
  host: string;
  protocol: string;
  decision: string;
  justification?: string | null;
}

export function formatNetworkRule(r: NetworkAmendment): string {
  const j = r.justification != null ? `, justification=${JSON.stringify(r.justification)}` : '';
  return `network_rule(host=${JSON.stringify(r.host)}, protocol=${JSON.stringify(r.protocol)}, decision=${JSON.stringify(r.decision)}${j})`;
}

export async function appendAllowPrefixRule(file: string, prefix: string[]): Promise<'appended' | 'exists'> {
  if (prefix.length === 0) throw new PolicyError('prefix rule requires at least one token');
  if (prefix.some((t) => t.trim() === '')) throw new PolicyError('invalid prefix rule: tokens cannot be empty');
  return appendLine(file, formatAllowPrefixRule(prefix));
}

/**
 * Append `formatPrefixRule(...)` under the lock, unless it is there already. The line is parsed before it is
 * written, so what lands in the file is a rule the loader reads (a PolicyError otherwise, nothing written).
 */
export async function appendPrefixRule(file: string, prefix: string[], decision: Decision, justification?: string): Promise<'appended' | 'exists'> {
  if (prefix.length === 0) throw new PolicyError('prefix rule requires at least one token');
  if (prefix.some((t) => t.trim() === '')) throw new PolicyError('invalid prefix rule: tokens cannot be empty');
  if (justification !== undefined && justification.trim() === '') throw new PolicyError('invalid rule: justification cannot be empty');
  const line = formatPrefixRule(prefix, decision, justification);
  parsePolicy([{ path: file, text: line + '\n' }], {});
  return appendLine(file, line);
}

export async function appendNetworkRule(file: string, rule: NetworkAmendment): Promise<'appended' | 'exists'> {
  return appendLine(file, formatNetworkRule(rule));
}

/** Lines (1-based) where a top-level statement starts at column 1: real declarations, not string contents. */
function declarationLines(text: string): Set<number> | undefined {
  try {
    const toks = tokenize(text, '<amend>');
    const out = new Set<number>();
    let atStart = true;
    for (const t of toks) {
      if (atStart && t.kind === 'ident' && t.col === 1) out.add(t.line);
      atStart = t.kind === 'newline' || (t.kind === 'op' && t.value === ';');
    }
    return out;
  } catch {
    return undefined; // unparsable file: fall back to a plain line comparison
  }
}

function containsDeclaration(text: string, line: string): boolean {
  const lines = text.split('\n');
  const hits: number[] = [];
  lines.forEach((l, k) => {
    if (l === line || l === line + '\r') hits.push(k + 1);
  });
  if (hits.length === 0) return false;
  const decl = declarationLines(text);
  return decl === undefined || hits.some((n) => decl.has(n));
}

async function lockFd(fd: number, file: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('flock', ['-x', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.on('error', (e) => reject(new PolicyError(`cannot lock ${file}: flock(1) is unavailable (${e.message})`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new PolicyError(`cannot lock ${file}: ${err.trim() || `flock exited ${code}`}`))));
  });
}

function readAll(fd: number): string {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off).toString('utf8');
}

async function appendLine(file: string, line: string): Promise<'appended' | 'exists'> {
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (e) {
    throw new PolicyError(`cannot create the folder for ${file}: ${(e as Error).message}`);
  }
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o644);
  } catch (e) {
    throw new PolicyError(`cannot open ${file}: ${(e as Error).message}`);
  }
  try {
    await lockFd(fd, file);
    const text = readAll(fd);
    if (containsDeclaration(text, line)) return 'exists';
    const sep = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    writeSync(fd, sep + line + '\n'); // one write(2) with O_APPEND
    return 'appended';
  } finally {
    closeSync(fd); // releases the lock
  }
}
