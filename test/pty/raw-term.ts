/**
 * Completeness measured without node-pty on the outside: the program runs on a raw pseudo-terminal that a
 * small python3 driver reads until EIO (fixtures/raw-term.py). When bytes are missing, the report says
 * where and what, so a failure tells a lost tail from extra or changed bytes.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const DRIVER = join(ROOT, 'test', 'pty', 'fixtures', 'raw-term.py');

export interface RawTerminalOptions {
  /** the program's environment (default: this process's) */
  env?: Record<string, string>;
  /** bytes typed on the terminal as the program starts (Buffer.from([4]): an end of file left queued) */
  typed?: Buffer;
}

/** Runs argv on a fresh raw terminal; resolves with every byte it wrote there and its exit status. */
export function runOnRawTerminal(argv: readonly string[], timeoutMs = 60_000, opts: RawTerminalOptions = {}): Promise<{ output: Buffer; status: number }> {
  return new Promise((resolve, reject) => {
    const typed = opts.typed?.length ? ['--type', opts.typed.toString('hex')] : [];
    const c = spawn('python3', [DRIVER, ...typed, ...argv], { stdio: ['ignore', 'pipe', 'inherit'], env: opts.env ?? process.env });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.stdout.on('data', (d: Buffer) => chunks.push(d));
    c.on('error', reject);
    c.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === null) reject(new Error(`raw terminal driver killed by ${signal} (timeout ${timeoutMs} ms?)`));
      else resolve({ output: Buffer.concat(chunks), status: code });
    });
  });
}

/** '' when equal; else the lengths, the first differing byte and a few bytes around it on both sides. */
export function describeMismatch(got: Buffer, want: Buffer): string {
  if (got.equals(want)) return '';
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  const at = (b: Buffer) => JSON.stringify(b.subarray(Math.max(0, i - 16), i + 32).toString('latin1'));
  const kind = i === got.length ? 'tail missing' : i === want.length ? 'extra bytes' : 'bytes differ';
  return `${kind}: ${got.length}/${want.length} bytes, first difference at ${i}: got ${at(got)}, want ${at(want)}`;
}
