/**
 * Running a command under bubblewrap: the I/O edge of src/sandbox/.
 * - bwrap missing → SandboxError naming the package; nothing runs.
 * - A missing program makes bwrap exit 1 (`bwrap: execvp ...`), indistinguishable from the program's own
 *   exit 1 without reading stderr (which must reach the caller untouched). So the program is resolved
 *   first, as bash would (PATH search), and a missing one is reported like bash: status 127.
 * - Signals: bwrap forwards none, so forwarded signals go to the sandboxed command itself; if the caller
 *   dies, `--die-with-parent` takes the sandbox down.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { BWRAP_MISSING, type CommandLine, SandboxError } from '../sandbox/index.js';
import { type Env, gatePaths } from '../paths/index.js';
import { sandboxSignalTarget } from './sandbox-signals.js';
import { TRUSTED_BWRAP_DIRS } from '../protocol/index.js';

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Only system folders: a caller who controls PATH must not be able to supply its own "bwrap". */
export { TRUSTED_BWRAP_DIRS };

/** The bubblewrap binary in one of TRUSTED_BWRAP_DIRS, else a SandboxError saying what to install. */
export function findBwrap(_env: Env, dirs: readonly string[] = TRUSTED_BWRAP_DIRS): string {
  for (const d of dirs) if (executable(join(d, 'bwrap'))) return join(d, 'bwrap');
  throw new SandboxError(BWRAP_MISSING);
}

/** Where bash would find `cmd`; null when it would say "command not found". */
export function resolveProgram(cmd: string, env: Env, cwd: string): string | null {
  if (cmd.includes('/')) {
    const p = resolve(cwd, cmd);
    return executable(p) ? p : null;
  }
  for (const d of (env.PATH ?? '').split(delimiter)) {
    const p = resolve(cwd, d || '.', cmd);
    if (executable(p)) return p;
  }
  return null;
}

/** The runtime folder must exist so it can be hidden (it holds every session's approval socket). */
export function prepareGateDirs(env: Env): void {
  mkdirSync(gatePaths(env).runtime, { recursive: true, mode: 0o700 });
}

export interface RunOptions {
  cwd: string;
  env: Env;
  /** the command the user asked for (for the 127 check and messages) */
  command: readonly string[];
  stdio?: 'inherit' | 'pipe';
}

export interface RunResult {
  status: number;
  stderr: string;
}

const STDERR_TAIL = 8192;

/**
 * Spawn one CommandLine and wait: exit status as bash reports it (128+n for signal n). With
 * stdio 'pipe', stderr is passed through AND its tail kept (for denial detection); stdout is inherited.
 */
export async function runCommandLine(line: CommandLine, o: RunOptions): Promise<RunResult> {
  if (resolveProgram(o.command[0], o.env, o.cwd) === null) {
    const msg = `gate-sh: ${o.command[0]}: command not found\n`;
    process.stderr.write(msg);
    return { status: 127, stderr: msg };
  }
  const child = spawn(line.program, line.args, {
    cwd: o.cwd,
    env: o.env as NodeJS.ProcessEnv,
    stdio: ['inherit', 'inherit', o.stdio === 'pipe' ? 'pipe' : 'inherit'],
  });
  let tail = '';
  child.stderr?.on('data', (b: Buffer) => {
    process.stderr.write(b);
    tail = (tail + b.toString('utf8')).slice(-STDERR_TAIL);
  });
  // bwrap forwards no signals: signal the sandboxed command itself (sandbox-signals.ts)
  const target = line.sandboxed ? sandboxSignalTarget(child) : child;
  const forward = (sig: NodeJS.Signals) => () => target.kill(sig);
  const sigs: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  const handlers = sigs.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    return await new Promise<RunResult>((res, rej) => {
      child.on('error', (e) => rej(new SandboxError(`cannot run ${o.command[0]}: ${e.message}`)));
      child.on('close', (code, signal) => {
        const n = signal ? 128 + (osSignal(signal) ?? 0) : (code ?? 1);
        res({ status: n, stderr: tail });
      });
    });
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}

function osSignal(s: NodeJS.Signals): number | undefined {
  return (osConstants.signals as Record<string, number>)[s];
}
