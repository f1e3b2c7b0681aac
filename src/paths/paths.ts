/**
 * Where the daemon's sockets and files live. Pure: takes the environment, returns paths.
 *
 *   <runtime>/<session>/req/        mounted at the same absolute path inside sandboxes
 *       request.sock                request channel (unix datagrams)
 *       stream.sock                 request channel, stream fallback for large messages
 *       escalate.sock               descriptor passing for escalated runs
 *       c/                          clients' reply sockets: gate-sh's own outside any sandbox, and
 *         <run id>/                 one folder per run, the only one its sandbox sees (runClientDir)
 *   <runtime>/<session>/approval/   NEVER visible inside a sandbox
 *       approval.sock               approval channel (humans, hosts)
 *   <runtime>/<session>/daemon.lock, daemon.pid
 * Amendments go to Codex's default rules file ($CODEX_HOME/rules/default.rules, see src/rules/load.ts).
 *
 * The one place GATE_HOME, CODEX_HOME and the runtime folder are computed, so that every entry point (gate-sh,
 * gate mcp, hooks, gate approve) finds the same daemon whatever environment the agent started it with:
 *   home     = realpath($HOME), else the password database's (a symlinked or trailing-slash HOME agrees)
 *   GATE_HOME = $GATE_HOME, else <home>/.gate-sh;  CODEX_HOME = $CODEX_HOME, else <home>/.codex (canonical)
 *   runtime  = $XDG_RUNTIME_DIR/gate-sh when set (an explicit choice; systemd sets it to /run/user/<uid>),
 *              else /run/user/<uid>/gate-sh when that folder is ours and private (so an agent's reduced
 *              environment without XDG_RUNTIME_DIR agrees with the login session),
 *              else /tmp/gate-sh-<uid> (fixed /tmp, not $TMPDIR, which agents change), created 0700.
 * Not pure: reads the file system (realpath, the owner and mode of the runtime folders). Trust boundary: a
 * runtime folder under /tmp that is not ours, not a folder, or writable by others is refused (another user
 * could otherwise answer as the daemon).
 */
import { join, basename, dirname, isAbsolute, resolve } from 'node:path';
import { homedir } from 'node:os';
import { accessSync, constants, lstatSync, realpathSync, statfsSync } from 'node:fs';

/** In the session folder: the line a run ended by a forced daemon stop prints (its mtime: when). */
export const STOP_NOTE_FILE = 'stop-note';

/** sun_path is 108 bytes including the NUL; unix-dgram truncates silently above that. */
export const MAX_SOCKET_PATH = 107;

/** The supervisors' notice socket, beside the request folder; the C side gets the name through
 * src/protocol/shared-with-c.ts (shims/gate-shared.h). */
export const NOTICE_SOCK = 'notice.sock';

/** The names of the folders and files laid out in the header above. The native gate-sh finds its daemon,
 * its start-up key and autostarts one with the same names, through src/protocol/shared-with-c.ts. */
export const RUNTIME_LAYOUT = {
  /** <XDG_RUNTIME_DIR or /run/user/<uid>>/gate-sh */
  folder: 'gate-sh',
  runUser: '/run/user',
  /** /tmp/gate-sh-<uid>, when neither is usable */
  tmpFolder: '/tmp/gate-sh-',
  defaultSession: 'default',
  requestDir: 'req',
  requestSock: 'request.sock',
  streamSock: 'stream.sock',
  clientDir: 'c',
  approvalDir: 'approval',
  startUpKey: 'start-up.key',
  lockFile: 'daemon.lock',
  logFile: 'daemon.log',
  /** $GATE_HOME, else ~/.gate-sh */
  home: '.gate-sh',
  configFile: 'config.toml',
} as const;
const L = RUNTIME_LAYOUT;

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
  /** the supervisors' notices (src/daemon/notice-channel.ts): outside the request folder, so no sandbox
   * reaches it */
  noticeSock: string;
  lockFile: string;
  pidFile: string;
}

export type Env = Record<string, string | undefined>;

/** p with symlinks, `..` and trailing slashes resolved as far as it exists (the rest appended as spelled). */
export function canonicalPath(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync.native(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(canonicalPath(parent), basename(abs));
  }
}

/** The user's home, canonical: realpath($HOME), else the password database's. */
export function homeDir(env: Env = process.env): string {
  return canonicalPath(env.HOME || homedir());
}

export function gateHome(env: Env = process.env, o: { read?: boolean } = {}): string {
  const set = env.GATE_HOME;
  if (set && !isAbsolute(set)) throw new Error(`GATE_HOME=${set} is a relative path: set it to an absolute folder (e.g. GATE_HOME="$PWD/${set}")`);
  const home = set ? canonicalPath(set) : join(homeDir(env), L.home);
  // `read`: a caller that only reads what is there (`gate policy check`, skills) needs no write access
  const problem = folderProblem(home, o.read === true);
  if (problem) throw new Error(`${set ? `GATE_HOME=${set}` : `the gate-sh home ${home}`} cannot be used: ${problem}; ${set ? 'set GATE_HOME to' : 'use GATE_HOME for'} a folder of yours`);
  return home;
}

/** Pseudo filesystems by statfs magic: a folder there is no place for rules, config or an audit log, and
 * creating one there fails in ways that would hang a recursive mkdir (/proc answers ENOENT forever). */
const PSEUDO_FS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
]);

/** once per path and process: the daemon asks for its paths on the hot path */
const folderChecked = new Map<string, string | undefined>();

/** Why `dir` (absolute, canonical) cannot be gate-sh's own folder: not a folder, on a pseudo filesystem, or
 * not writable (itself, or the nearest folder above it that exists, where it would be created). */
export function folderProblem(dir: string, readOnly = false): string | undefined {
  const key = `${readOnly ? 'r' : 'w'}:${dir}`;
  if (folderChecked.has(key)) return folderChecked.get(key);
  let problem: string | undefined;
  let at = dir;
  for (;;) {
    let st;
    try {
      st = lstatSync(at);
    } catch {
      const up = dirname(at);
      if (up === at) break;
      at = up;
      continue;
    }
    if (!st.isDirectory()) problem = at === dir ? `${dir} is not a folder` : `${at}, above it, is not a folder`;
    else {
      let fs: string | undefined;
      try {
        fs = PSEUDO_FS.get(statfsSync(at).type);
      } catch {
        /* no statfs answer: the checks below still hold */
      }
      if (fs) problem = `${at} is on the ${fs} pseudo filesystem`;
      else if (!readOnly) {
        try {
          accessSync(at, constants.W_OK | constants.X_OK);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          problem = `${at}${at === dir ? '' : ', where it would be created,'} is not writable (${code === 'EROFS' ? 'a read-only filesystem' : code})`;
        }
      }
    }
    break;
  }
  folderChecked.set(key, problem);
  return problem;
}

export function codexHome(env: Env = process.env): string {
  return env.CODEX_HOME ? canonicalPath(env.CODEX_HOME) : join(homeDir(env), '.codex');
}

/** Why `dir` cannot be trusted as this user's private folder, or undefined when it can (or does not exist). */
export function privateDirProblem(dir: string, uid: number = process.getuid?.() ?? 0): string | undefined {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return undefined;
  }
  if (!st.isDirectory()) return `${dir} is not a folder${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not ${uid}`;
  // others may read (a sandbox's empty tmpfs over it is 0755), never create entries
  if (st.mode & 0o022) return `${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Where the runtime folder is looked for; tests point these at folders of their own. */
export interface RuntimeRoots {
  uid?: number;
  /** default /run/user */
  runUser?: string;
  /** default /tmp */
  tmp?: string;
}

/** The runtime folder (see the header): the same for every environment of one user. */
export function runtimeDir(env: Env = process.env, roots: RuntimeRoots = {}): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && isAbsolute(xdg)) return join(canonicalPath(xdg), L.folder);
  const uid = roots.uid ?? process.getuid?.() ?? 0;
  const session = join(roots.runUser ?? L.runUser, String(uid));
  if (isDir(session) && privateDirProblem(session, uid) === undefined) return join(canonicalPath(session), L.folder);
  const tmp = join(roots.tmp ?? dirname(L.tmpFolder), `${basename(L.tmpFolder)}${uid}`);
  const problem = privateDirProblem(tmp, uid);
  if (problem) throw new Error(`refusing the runtime folder: ${problem}; remove it, or set XDG_RUNTIME_DIR to a folder of yours`);
  return tmp;
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function sessionName(env: Env = process.env): string {
  const s = env.GATE_SESSION || L.defaultSession;
  if (!/^[A-Za-z0-9._-]{1,32}$/.test(s) || s === '.' || s === '..')
    throw new Error(`invalid GATE_SESSION '${s}': use 1-32 letters, digits, '.', '_' or '-'`);
  return s;
}

export function gatePaths(env: Env = process.env): GatePaths {
  const home = gateHome(env);
  const runtime = runtimeDir(env);
  const session = sessionName(env);
  const sessionDir = join(runtime, session);
  const requestDir = join(sessionDir, L.requestDir);
  const approvalDir = join(sessionDir, L.approvalDir);
  return {
    home,
    rulesDir: join(home, 'rules'),
    configFile: join(home, L.configFile),
    auditLog: join(home, 'audit.jsonl'),
    runtime,
    session,
    sessionDir,
    requestDir,
    requestSock: join(requestDir, L.requestSock),
    streamSock: join(requestDir, L.streamSock),
    escalateSock: join(requestDir, 'escalate.sock'),
    clientDir: join(requestDir, L.clientDir),
    approvalDir,
    approvalSock: join(approvalDir, 'approval.sock'),
    noticeSock: join(sessionDir, NOTICE_SOCK),
    lockFile: join(sessionDir, L.lockFile),
    pidFile: join(sessionDir, 'daemon.pid'),
  };
}

/** Throws when a socket path would be cut by sun_path's limit. */
export function checkSocketPath(p: string): string {
  if (Buffer.byteLength(p) > MAX_SOCKET_PATH)
    throw new Error(`socket path too long (${Buffer.byteLength(p)} > ${MAX_SOCKET_PATH} bytes): ${p}; set XDG_RUNTIME_DIR to a shorter folder`);
  return p;
}

/** The longest reply-socket name a client binds under clientDir (pid in base 36, 10 hex digits). */
const LONGEST_REPLY_NAME = 'zzzzzzz-0123456789.sock';
/** A run's client folder name: its run id (src/daemon/runs.ts draws `r-` and 12 base64url characters); any
 * name of letters, digits, `-` and `_` that is not a reply socket's (those end in `.sock`). */
const RUN_FOLDER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const LONGEST_RUN_FOLDER = 'r-0123456789ab';

/**
 * The client folder of a run: `<clientDir>/<run id>`, made by the daemon when it plans the run
 * and removed when the run (and its jobs) ended. A run's sandbox sees and can write this folder alone, at
 * the same path as on the host, so that no run can unlink or replace another's reply sockets. Throws on a
 * name that is not a run id (it becomes a path).
 */
export function runClientDir(paths: Pick<GatePaths, 'clientDir'>, runId: string): string {
  if (!RUN_FOLDER.test(runId)) throw new Error(`not a run's client folder: ${JSON.stringify(runId)}`);
  return join(paths.clientDir, runId);
}

/** Whether a name is one a run's client folder may have (runClientDir). */
export function isRunFolderName(name: string): boolean {
  return RUN_FOLDER.test(name);
}

/** Where this process binds its reply sockets: its run's client folder (GATE_CLIENT_DIR, set in every gated
 * run) when that is one, else the clients' folder itself (a client outside any run). */
export function ownClientDir(paths: Pick<GatePaths, 'clientDir'>, env: Env = process.env): string {
  const d = env.GATE_CLIENT_DIR;
  return d && replyFolder(paths, `${d}/x`) ? d : paths.clientDir;
}

/**
 * Where a reply socket was bound, as the daemon reads the sender's address: `''` directly in the clients'
 * folder (a client outside any sandbox: no sandbox can bind there), the run id of the run folder it is in,
 * or undefined anywhere else (a path a sandbox could have bound: not a client folder at all). Exact text
 * (no `..`, no doubled slash): the address is the path as the sender bound it.
 */
export function replyFolder(paths: Pick<GatePaths, 'clientDir'>, replyPath: string): string | undefined {
  const base = `${paths.clientDir}/`;
  if (!replyPath.startsWith(base)) return undefined;
  const rest = replyPath.slice(base.length).split('/');
  if (rest.length === 1) return rest[0] !== '' && rest[0] !== '.' && rest[0] !== '..' ? '' : undefined;
  if (rest.length !== 2 || !RUN_FOLDER.test(rest[0]) || rest[1] === '' || rest[1] === '.' || rest[1] === '..') return undefined;
  return rest[0];
}

/**
 * Every socket the daemon binds, and the longest a client binds, fits sun_path: checked before anything is
 * created, so a long runtime folder is a clear error and never a socket bound at a cut-off path elsewhere.
 */
export function checkSocketPaths(paths: GatePaths): void {
  for (const p of [
    paths.requestSock,
    paths.streamSock,
    paths.escalateSock,
    paths.approvalSock,
    paths.noticeSock,
    join(paths.approvalDir, 'host.sock'),
    join(paths.clientDir, LONGEST_RUN_FOLDER, LONGEST_REPLY_NAME),
  ])
    checkSocketPath(p);
}
