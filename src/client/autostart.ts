/**
 * ensureDaemon: make sure a daemon answers for this session, starting one in the background if allowed.
 * Safe when many clients race: every starter spawns `gate daemon run`, the session lock lets exactly one
 * of them live, and every caller waits for a ping answer. Imports stay small (gate-sh's start-up path when
 * no daemon runs); the config parser is loaded only to read `autostart`.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSocketPaths, type Env, gatePaths, type GatePaths, RUNTIME_LAYOUT } from '../paths/index.js';
import { pingDaemon } from '../transport/index.js';
import { reachDaemon, unreachableMessage } from './reach.js';

/** Repository root: dist/src/client/autostart.js → ../../.. */
const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
export const GATE_BIN = join(ROOT, 'bin', 'gate');

export class AutostartError extends Error {}

/** A daemon's start refused by a sandbox: a socket (seccomp, Landlock) or the runtime folder (read-only). */
const SANDBOX_REFUSAL = /\b(?:listen|bind|connect) (?:EPERM|EACCES|EROFS)\b|\b(?:EPERM|EACCES|EROFS): [^,]*, mkdir\b/;

function cannotStartHere(why: string): string {
  return unreachableMessage(`no gate daemon answers, and one cannot start here either (${why})`);
}

export interface StartOptions {
  /** wait this long for the new daemon to answer (default 30 s: a loaded machine) */
  timeoutMs?: number;
  /** extra `gate daemon run` arguments (flags) */
  args?: string[];
}

export async function ensureDaemon(env: Env = process.env): Promise<void> {
  const paths = gatePaths(env);
  // A daemon starting or stopping (lock held, sockets not bound) or accepting without answering yet is
  // waited for; one that runs where this process cannot talk to it (another sandbox around us) is said at
  // once: starting one would only be refused by the lock and leave us waiting.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const reach = await reachDaemon(paths, env, 1000);
    if (reach.state === 'up') return;
    if (reach.state === 'unreachable') throw new AutostartError(unreachableMessage(reach.why));
    if (reach.state === 'down') break;
    if (Date.now() > deadline) throw new AutostartError(`the gate daemon did not answer within 30 s (${reach.why}); check 'gate status'`);
    await new Promise((r) => setTimeout(r, 50));
  }
  if (env.GATE_NO_AUTOSTART === '1')
    throw new AutostartError(`the gate daemon is not running and GATE_NO_AUTOSTART=1; start it with 'gate daemon start' (or 'gate daemon run' in a terminal)`);
  const { loadConfig } = await import('../config/load.js');
  const config = loadConfig({ file: paths.configFile, env });
  if (!config.autostart)
    throw new AutostartError(`the gate daemon is not running and autostart = false in ${paths.configFile}; start it with 'gate daemon start'`);
  await startBackgroundDaemon(env, paths);
}

/** Spawn a detached `gate daemon run` logging to <sessionDir>/daemon.log; resolves once it answers. */
export async function startBackgroundDaemon(env: Env, paths: GatePaths = gatePaths(env), opts: StartOptions = {}): Promise<Record<string, unknown>> {
  checkSocketPaths(paths); // before creating anything: a clear error, not a daemon that cannot bind
  const logFile = join(paths.sessionDir, RUNTIME_LAYOUT.logFile);
  let fd: number;
  try {
    mkdirSync(paths.sessionDir, { recursive: true, mode: 0o700 });
    fd = openSync(logFile, 'a', 0o600);
  } catch (e) {
    // the session folder and its log, in the user's own runtime folder: refused only by a sandbox around us
    if (['EPERM', 'EACCES', 'EROFS'].includes((e as NodeJS.ErrnoException).code ?? '')) throw new AutostartError(cannotStartHere((e as Error).message));
    throw e;
  }
  const from = fstatSync(fd).size; // report this start's own output, not an earlier one's
  const child = spawn(process.execPath, [GATE_BIN, 'daemon', 'run', ...(opts.args ?? [])], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: env as NodeJS.ProcessEnv,
  });
  closeSync(fd);
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  child.unref();
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let delay = 10;
  while (Date.now() < deadline) {
    const info = await pingDaemon(paths, 500);
    if (info) return info;
    // Our child failed, and nobody else's daemon answers either: report why.
    if (exited !== undefined && exited !== 0) {
      const again = await reachDaemon(paths, env, 300);
      if (again.state === 'up') return again.info;
      const why = tail(logFile, from);
      // its folders or sockets refused by a sandbox around us (a user's own runtime folder never does that)
      if (SANDBOX_REFUSAL.test(why)) throw new AutostartError(cannotStartHere(why));
      if (!/already running/.test(why)) throw new AutostartError(`the gate daemon failed to start: ${why}`);
      // another starter's daemon holds the lock: wait for it, unless its socket is unreachable from here
      if (again.state === 'unreachable') throw new AutostartError(unreachableMessage(again.why));
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 20); // a start takes ~0.3-1 s: a longer step would be waited out whole
  }
  throw new AutostartError(`the gate daemon did not answer within ${Math.round((opts.timeoutMs ?? 30_000) / 1000)} s; see ${logFile}`);
}

function tail(file: string, from: number): string {
  try {
    const lines = readFileSync(file).subarray(from).toString('utf8').trim().split('\n');
    return lines.slice(-3).map((l) => l.replace(/^gate-sh: /, '')).join(' | ');
  } catch {
    return '(no log)';
  }
}
