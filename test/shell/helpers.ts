/** Real gate-sh and bash processes for the shell tests: run one, collect stdout/stderr as bytes. Test-only.
 * Their daemon: daemonForFile(SHELL_DAEMON) from test/helpers/daemon.ts. */
import { createHash } from 'node:crypto';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { GATE_SH } from '../helpers/env.js';

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** with hashStdout: "<sha256>:<bytes>" */
  digest?: string;
  /** spawn to close of all output */
  ms: number;
  /** spawn to the process's exit (an orphaned grandchild may hold stdout open longer) */
  exitMs: number;
}

export interface RunOpts {
  env: Record<string, string>;
  input?: Buffer | string;
  cwd?: string;
  /** called with the child as soon as it is spawned (to send signals, watch output) */
  onSpawn?: (c: ChildProcess) => void;
  stdio?: StdioOptions;
  /** argv[0] of the process (bash's $0 when no name is given) */
  argv0?: string;
  /** keep only the sha256 and length of stdout (large outputs) */
  hashStdout?: boolean;
}

export function run(program: string, args: string[], o: RunOpts): Promise<Ran> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const c = spawn(program, args, { env: o.env, cwd: o.cwd, argv0: o.argv0, stdio: o.stdio ?? ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const h = o.hashStdout ? createHash('sha256') : undefined;
    let n = 0;
    c.stdout?.on('data', (d: Buffer) => (h ? (h.update(d), (n += d.length)) : out.push(d)));
    c.stderr?.on('data', (d: Buffer) => err.push(d));
    let exitMs = 0;
    c.on('exit', () => (exitMs = Date.now() - t0));
    c.on('error', reject);
    if (c.stdin) {
      c.stdin.on('error', () => undefined); // the script may not read its stdin
      c.stdin.end(o.input ?? '');
    }
    o.onSpawn?.(c);
    c.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        digest: h ? `${h.digest('hex')}:${n}` : undefined,
        ms: Date.now() - t0,
        exitMs,
      }),
    );
  });
}

export const gateSh = (args: string[], o: RunOpts): Promise<Ran> => run(GATE_SH, args, o);
/** bash named like gate-sh, so $0 and diagnostics ("NAME: -c: line 1: ...") read the same */
export const bash = (args: string[], o: RunOpts): Promise<Ran> => run('/bin/bash', args, { argv0: GATE_SH, ...o });

/** bash's view of a status: 128+n for a child killed by signal n. */
export function status(r: Ran): number {
  if (r.code !== null) return r.code;
  const n: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return 128 + (n[r.signal ?? ''] ?? 0);
}

/** Run tasks with at most `n` in flight (the suite shares 2 cores). */
export async function pool<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]);
      }
    }),
  );
  return out;
}

/** The shell suites' daemon: no sandbox, approval on request. */
export const SHELL_DAEMON = { env: { GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'on-request' } };
