// The Codex reference binary (@openai/codex@0.169.0 in scratch/codex): a test oracle, never a dependency.
// Missing oracle = loud failure, never a skip.
import { existsSync, mkdirSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

const TRIPLE: Record<string, string> = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' };
const ARCH_PKG: Record<string, string> = { x64: 'codex-linux-x64', arm64: 'codex-linux-arm64' };

export function oraclePath(): string {
  const p = join(ROOT, 'scratch/codex/node_modules/@openai', ARCH_PKG[process.arch] ?? '?', 'vendor', TRIPLE[process.arch] ?? '?', 'bin/codex');
  if (!existsSync(p)) {
    throw new Error(`Codex oracle missing at ${p}: run 'node scripts/ensure-oracle.mjs' (npm test's pretest installs @openai/codex@0.169.0)`);
  }
  return p;
}

export interface OracleResult {
  status: number;
  stdout: string;
  stderr: string;
}

// A CODEX_HOME under the temp folder keeps the binary from setting up helper aliases (10x faster).
const codexHome = join(tmpdir(), `gate-oracle-home-${process.pid}`);

export function runOracle(bin: string, args: string[]): Promise<OracleResult> {
  mkdirSync(codexHome, { recursive: true });
  return new Promise((resolve) => {
    execFile(
      bin,
      ['execpolicy', 'check', ...args],
      { env: { ...process.env, CODEX_HOME: codexHome, RUST_BACKTRACE: '0' }, maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        const status = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** Run jobs with bounded concurrency. */
export async function pool<T, R>(items: T[], width: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const k = next++;
        out[k] = await f(items[k]);
      }
    }),
  );
  return out;
}
