/**
 * Where the daemon's sockets and files live. Pure: takes the environment, returns paths.
 *
 *   <runtime>/<session>/req/        mounted at the same absolute path inside sandboxes
 *       request.sock                request channel (unix datagrams)
 *       stream.sock                 request channel, stream fallback for large messages
 *       escalate.sock               descriptor passing for escalated runs
 *       c/                          clients' reply sockets
 *   <runtime>/<session>/approval/   NEVER visible inside a sandbox
 *       approval.sock               approval channel (humans, hosts)
 *   <runtime>/<session>/daemon.lock, daemon.pid
 * Amendments go to Codex's default rules file ($CODEX_HOME/rules/default.rules, see policy/load.ts).
 * runtime = $XDG_RUNTIME_DIR/gate-sh, else $GATE_HOME/run (GATE_HOME defaults to ~/.gate-sh)
 */
import { join } from 'node:path';
import { homedir } from 'node:os';

/** sun_path is 108 bytes including the NUL; unix-dgram truncates silently above that. */
export const MAX_SOCKET_PATH = 107;

export interface GatePaths {
  home: string; // $GATE_HOME
  rulesDir: string; // $GATE_HOME/rules
  configFile: string;
  auditLog: string;
  runtime: string;
  session: string;
  sessionDir: string;
  requestDir: string;
  requestSock: string;
  streamSock: string;
  escalateSock: string;
  clientDir: string;
  approvalDir: string;
  approvalSock: string;
  lockFile: string;
  pidFile: string;
}

export type Env = Record<string, string | undefined>;

export function gateHome(env: Env = process.env): string {
  return env.GATE_HOME || join(env.HOME || homedir(), '.gate-sh');
}

export function codexHome(env: Env = process.env): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
}

export function sessionName(env: Env = process.env): string {
  const s = env.GATE_SESSION || 'default';
  if (!/^[A-Za-z0-9._-]{1,32}$/.test(s) || s === '.' || s === '..')
    throw new Error(`invalid GATE_SESSION '${s}': use 1-32 letters, digits, '.', '_' or '-'`);
  return s;
}

export function gatePaths(env: Env = process.env): GatePaths {
  const home = gateHome(env);
  const runtime = env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'gate-sh') : join(home, 'run');
  const session = sessionName(env);
  const sessionDir = join(runtime, session);
  const requestDir = join(sessionDir, 'req');
  const approvalDir = join(sessionDir, 'approval');
  return {
    home,
    rulesDir: join(home, 'rules'),
    configFile: join(home, 'config.toml'),
    auditLog: join(home, 'audit.jsonl'),
    runtime,
    session,
    sessionDir,
    requestDir,
    requestSock: join(requestDir, 'request.sock'),
    streamSock: join(requestDir, 'stream.sock'),
    escalateSock: join(requestDir, 'escalate.sock'),
    clientDir: join(requestDir, 'c'),
    approvalDir,
    approvalSock: join(approvalDir, 'approval.sock'),
    lockFile: join(sessionDir, 'daemon.lock'),
    pidFile: join(sessionDir, 'daemon.pid'),
  };
}

/** Throws when a socket path would be cut by sun_path's limit. */
export function checkSocketPath(p: string): string {
  if (Buffer.byteLength(p) > MAX_SOCKET_PATH)
    throw new Error(`socket path too long (${Buffer.byteLength(p)} > ${MAX_SOCKET_PATH} bytes): ${p}; set XDG_RUNTIME_DIR or GATE_HOME to a shorter folder`);
  return p;
}

/** The longest reply-socket name a client binds under clientDir (pid in base 36, 10 hex digits). */
const LONGEST_REPLY_NAME = 'zzzzzzz-0123456789.sock';

/**
 * Every socket the daemon binds, and the longest a client binds, fits sun_path: checked before anything is
 * created, so a long runtime folder is a clear error and never a socket bound at a cut-off path elsewhere.
 */
export function checkSocketPaths(paths: GatePaths): void {
  for (const p of [paths.requestSock, paths.streamSock, paths.escalateSock, paths.approvalSock, join(paths.approvalDir, 'host.sock'), join(paths.clientDir, LONGEST_REPLY_NAME)]) checkSocketPath(p);
}
