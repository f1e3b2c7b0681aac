/** Many request-channel client processes at once (fixtures/burst.ts), for the concurrency test and the bench. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BURST = join(fileURLToPath(import.meta.url), '..', 'fixtures', 'burst.js');

export interface BurstResult {
  tag: string;
  count: number;
  ok: number;
  lost: number;
  crossed: number;
  /** handles still open once every request was answered and the client closed */
  open: number;
  errors: string[];
  ms: number;
  p50: number | null;
  p99: number | null;
}

/** `clients` processes × `count` preflights each, all at once. */
export function bursts(env: Record<string, string>, clients: number, count: number, inflight: number): Promise<BurstResult[]> {
  return Promise.all(
    Array.from(
      { length: clients },
      (_, c) =>
        new Promise<BurstResult>((resolve, reject) => {
          const p = spawn(process.execPath, [BURST, `c${c}`, String(count), String(inflight)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          p.stdout.on('data', (b) => (out += b));
          p.on('error', reject);
          p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`burst c${c} exited ${code}: ${out}`))));
        }),
    ),
  );
}

