/**
 * Running a program in a test: its output read to the end, its status, a time limit. Test-only.
 * The one runner the suites share (the exec gate's, the daemon's), so the wait for the pipes is one.
 */
import { spawn } from 'node:child_process';
import { track } from './daemon.js';

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function run(
  program: string,
  args: string[],
  o: { env: Record<string, string>; cwd?: string; input?: string | Buffer; timeoutMs?: number },
): Promise<Result> {
  return new Promise((resolve) => {
    const child = track(spawn(program, args, { env: o.env, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdin!.on('error', () => {});
    child.stdin!.end(o.input ?? '');
    const t = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    let grace: NodeJS.Timeout | undefined;
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(t);
      clearTimeout(grace);
      resolve({ code, signal, stdout, stderr });
    };
    // What the process wrote before it exited may still be in the pipes at 'exit' (node reads them after:
    // under load a gate-sh that printed its denial and exited 126 was seen with an empty stderr), so the
    // result waits for 'close'; a background job that outlives the process and keeps the pipes open gets
    // a grace period instead.
    child.on('exit', (code, signal) => {
      clearTimeout(t);
      grace = setTimeout(() => done(code, signal), RUN_GRACE_MS);
    });
    child.on('close', (code, signal) => done(code, signal));
  });
}

/** How long a result waits, after its process exited, for the pipes to be read to their end. */
const RUN_GRACE_MS = 2000;

