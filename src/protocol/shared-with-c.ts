/**
 * Everything the C side (shims/, native/) shares with the TypeScript side, written once here: the protocol
 * version and size limits, the exec gate's variables and the markers an exec carries, which variables an
 * ExecRequest carries, the message types, field names, actions and error codes the C side writes or reads,
 * the signals passed on, and the session holder's line protocol (its verbs, and the errno values of its
 * errors). shims/gate-shared.h is generated from this module (`npm run gen:c`, scripts/gen-c-header.mjs);
 * test/protocol/shared-with-c.test.ts fails when the committed header says anything else, or when a C file
 * spells one of these values itself. Each wire name is checked against the message types it belongs to
 * (`satisfies`), so a renamed field or type does not compile until this list follows it.
 * Pure: constants, and `fill` for the texts; imports types only (the C side builds before any TypeScript does).
 */
import type { Action } from './action.js';
import type {
  Ack,
  ErrorCode,
  ExecReply,
  ExecRequest,
  ExecReused,
  PreflightReply,
  PreflightRequest,
  Request,
  Reply,
  ReusedAudit,
  ReusePreset,
  ReuseScope,
  RunFinished,
  SessionSandboxStale,
  SubcommandReply,
} from './messages.js';
import type { PlanRequest, StartUpFds, PlanReply } from './plan.js';

export const PROTOCOL_VERSION = 1;
/** unix-dgram truncates silently above 64 KiB; stay well under it. */
export const MAX_DATAGRAM = 60 * 1024;
/** The exec gate's C client reads answers into this much room (GATE_REPLY_ROOM) and fetches a longer one
 * again over stream.sock by the same id: the daemon keeps replies longer than this. */
export const CLIENT_REPLY_ROOM = 8192;
/** Stream frames above this are refused (a 1 MiB script plus its environment fits). */
export const MAX_STREAM_FRAME = 64 * 1024 * 1024;
/** The longest audit record kept whole, in UTF-16 units of its encoded fields (src/daemon/audit.ts cuts a
 * longer one's strings); a supervisor writes a reused exec's line itself only when the whole line is at most
 * this many bytes, so the daemon would not have cut it either (shims/gate-reuse.c). */
export const MAX_AUDIT_RECORD = 64 * 1024;

/** In the daemon's request folder (beside GATE_REQUEST_SOCK): the policy epoch, a little-endian 64-bit
 * count the daemon raises whenever its decisions may change (a rule reloaded, a new daemon); a supervisor
 * reuses an answer only while it still reads the epoch the answer came with (src/daemon/reuse-grants.ts). */
export const POLICY_EPOCH_FILE = 'policy_epoch';

/** gate-sh's own plumbing between a run's gate-sh and its command, by the basename of a process's exe: the
 * reading of where a command came from looks through it (src/decide/provenance.ts), and a supervisor's
 * scoped reuse stops at it (shims/gate-reuse.c: a run nested below it starts its own reading). */
export const PROVENANCE_PLUMBING = ['gate-launch', 'gate-sh', 'gate-sh-native', 'gate-join', 'gate-session', 'bwrap'] as const;

/** The variables that tell a gated run's execs where to ask (set by the run plan, read by the C client). */
export const EXEC_GATE_VARIABLES = {
  run: 'GATE_RUN',
  requestSock: 'GATE_REQUEST_SOCK',
  streamSock: 'GATE_STREAM_SOCK',
  escalateSock: 'GATE_ESCALATE_SOCK',
  clientDir: 'GATE_CLIENT_DIR',
  execTimeoutMs: 'GATE_EXEC_TIMEOUT_MS',
  kernelSock: 'GATE_KERNEL_SOCK',
  /** the marks an exec carries: allowed (<pid>:<program>), escalated (<pid>:<token>), the plan's inner
   * program (the command bubblewrap runs), left to the kernel layer (<pid>:<program>), the guard's lines */
  checked: 'GATE_CHECKED',
  escalate: 'GATE_ESCALATE',
  innerProgram: 'GATE_THEN',
  ask: 'GATE_ASK',
  /** the supervisor's rewrite of a new program's GATE_ASK mark (the same length: it is rewritten in place,
   * in the new program's first stack): its forked children are below a program running its own files */
  below: 'GATE_OWN',
  guard: 'GATE_GUARD',
} as const;
export type ExecGateVariable = (typeof EXEC_GATE_VARIABLES)[keyof typeof EXEC_GATE_VARIABLES];

/**
 * The variables an ExecRequest reports (its `env`): by name, and by prefix. Wider than what the daemon
 * decides as code loading (src/heuristics/code-loading.ts, which the test checks is covered): the C side
 * runs in every exec and cannot ask which names matter, so it sends each family whole.
 */
export const FORWARDED_NAMES = [
  'PATH', 'ENV', 'BASH_ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'ZDOTDIR',
  'INPUTRC', 'GCONV_PATH', 'LOCPATH', 'HOSTALIASES', 'CLASSPATH', 'PAGER', 'GH_PAGER', 'MANPAGER',
  'SYSTEMD_PAGER', 'LESSOPEN', 'LESSCLOSE', 'EDITOR', 'VISUAL', 'BROWSER', 'SSH_ASKPASS',
  'SUDO_ASKPASS', 'MAKEFLAGS', 'MFLAGS', 'GEM_PATH', 'GEM_HOME', 'CARGO_HOME',
  'RUSTC_WRAPPER', 'PERLLIB',
] as const;
export const FORWARDED_PREFIXES = [
  'LD_', 'DYLD_', 'GIT_', 'BASH_FUNC_', 'PYTHON', 'NODE_', 'PERL5', 'RUBY', 'JAVA_',
  '_JAVA_', 'JDK_', 'NPM_CONFIG_', 'npm_config_', 'PIP_',
] as const;

/**
 * One call of gate-sh (src/exec/run-call.ts; its native transport, shims/gate-sh-native.c): the exit status
 * when nothing ran (denied, or gate-sh could not ask), how much of a failed turn-sandbox attempt's stderr
 * the daemon reads for a sandbox denial, the largest script the native gate-sh (and `gate mcp` in its own
 * process) runs itself (larger ones take the Node gate-sh's stream path and script descriptor), and how long
 * a person must be waited for before gate-sh says so.
 */
export const RUN_CALL = {
  exitDenied: 126,
  stderrTailBytes: 4096,
  nativeMaxScript: 32 * 1024,
  noticeDelayMs: 300,
} as const;

/**
 * How a client waits for the daemon's reply to a call's requests (src/transport/datagram-request.ts; the
 * native gate-sh's waits, GATE_CALL_WAITS in the C side's one request loop, shims/gate-transport.c): the
 * first resend after firstMs, each later wait doubled up to maxMs, `retries` resends (35 s in all); while a
 * person is asked, a ping every heartbeatMs, and the wait ends after silenceMs without any sign of life.
 */
export const REQUEST_WAITS = { firstMs: 1000, maxMs: 4000, retries: 9, heartbeatMs: 500, silenceMs: 5000 } as const;

/**
 * How the exec gate's C client (shims/gate-transport.c, the one request loop of the C side) waits for an exec's
 * answer: each send waits timeoutMs (GATE_EXEC_TIMEOUT_MS sets another), `attempts` sends of the same id in all,
 * and a pending answer extends the wait to pendingFactor × timeoutMs and counts the sends anew (the daemon repeats
 * pending while a person is asked). Both C clients let a send wait up to sendRoomMs for room in the daemon's full
 * datagram queue (the exec gate then counts the send as lost; the native gate-sh says the daemon is overloaded).
 */
export const EXEC_WAITS = { timeoutMs: 2000, attempts: 5, pendingFactor: 3, sendRoomMs: 1000 } as const;

/** How long the native gate-sh waits for a daemon it started to bind its socket before it hands over to the
 * Node gate-sh, which waits on (src/client/autostart.ts) or says why no daemon can run; polled every pollMs. */
export const NATIVE_AUTOSTART = { waitMs: 10_000, pollMs: 5 } as const;

/**
 * The lines a call's client prints (after `gate-sh: `), each %s filled in order (`fill`). Printable ASCII,
 * no other `%`: the C side uses them as printf formats.
 */
export const CALL_TEXTS = {
  prefix: 'gate-sh: ',
  nothingRan: '%s; nothing ran',
  internalError: 'internal error: %s; nothing ran',
  noPlan: 'protocol error from the gate daemon: no run plan in the reply; nothing ran',
  malformedReply: 'protocol error from the gate daemon: malformed reply; nothing ran',
  unexpectedReply: "protocol error: unexpected reply '%s' to preflight; nothing ran. Check 'gate status'",
  unexpectedRerunReply: "unexpected reply '%s'",
  rerunNotAsked: 'the sandboxed run failed (%s); could not ask to rerun it: %s',
  startUpNotEnded: 'the start-up phase could not be ended (%s); the script did not run',
  cannotStart: 'cannot start %s: %s',
  waiting: "waiting for approval (answer with 'gate approve')...",
  notAnswering: "the gate daemon did not answer within %s s%s; check 'gate status', or restart it with 'gate daemon stop; gate daemon start'",
  silent: "the gate daemon stopped answering while an approval was pending; check 'gate status'",
  died: "the gate daemon stopped %s; start it again with 'gate daemon start' and check 'gate log'",
  diedPending: 'while an approval was pending',
  diedBefore: 'before answering',
  badVersion: 'protocol version mismatch with the gate daemon: %s',
  refusedRequest: 'the gate daemon refused the request (%s): %s',
} as const;

/** A text of CALL_TEXTS with its %s filled in order (a missing argument fills as nothing). */
export function fill(text: string, ...args: string[]): string {
  let i = 0;
  return text.replace(/%s/g, () => args[i++] ?? '');
}

/** The signals gate-sh, the launcher's front and the escalation client pass on to the command. */
export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGWINCH'] as const;

/** The supervisors' notice socket, beside the daemon's request folder (src/daemon/notice-channel.ts), and the
 * names of the runtime folder and a session's files (the native gate-sh finds its daemon, start-up key and
 * autostarts one with them): named where the session's other files are (src/paths/paths.ts), passed on to C
 * from here. */
export { NOTICE_SOCK, RUNTIME_LAYOUT } from '../paths/index.js';

/** Where gate-sh trusts a bubblewrap to be: system folders only, so a caller who controls PATH cannot supply
 * its own "bwrap" (src/exec/sandbox-run.ts findBwrap; the native gate-sh's check that one is there). */
export const TRUSTED_BWRAP_DIRS: readonly string[] = ['/usr/bin', '/bin', '/usr/local/bin', '/usr/sbin'];

/** The message types the C side writes or reads. */
export const MESSAGE_TYPES = {
  exec: 'exec',
  execReused: 'exec-reused',
  preflight: 'preflight',
  runFinished: 'run-finished',
  startUpEnd: 'start-up-end',
  sessionSandboxStale: 'session-sandbox-stale',
  ping: 'ping',
  pending: 'pending',
  error: 'error',
} as const satisfies Record<string, (Request | Reply | ExecReused)['type']>;

/** The actions a reply names (Action's type). */
export const ACTIONS = { run: 'Run', escalate: 'Escalate', deny: 'Deny' } as const satisfies Record<string, Action['type']>;

/** The error codes the C side reads; `unreachable` is the supervisor's own (the daemon is gone), said to the
 * LD_PRELOAD layer as the daemon would say an error. */
export const ERROR_CODES = {
  tooLarge: 'too-large',
  badVersion: 'bad-version',
  refused: 'refused',
  malformed: 'malformed',
} as const satisfies Record<string, ErrorCode>;
export const SUPERVISOR_ERROR_CODES = { unreachable: 'unreachable' } as const;

/** Values of fields the C side writes. */
export const FIELD_VALUES = {
  kernel: 'kernel',
  base64: 'base64',
  useDefault: 'use_default',
  requireEscalated: 'require_escalated',
} as const satisfies Record<
  string,
  NonNullable<ExecRequest['layer'] | ExecRequest['encoding'] | PreflightRequest['sandbox_permissions']>
>;

type Keys<T> = T extends unknown ? keyof T : never;
type WireField =
  | Keys<Request | Reply | ExecReused | PreflightRequest | PreflightReply | RunFinished | SessionSandboxStale>
  | Keys<ExecRequest | ExecReply | NonNullable<ExecReply['reuse']> | NonNullable<NonNullable<ExecReply['reuse']>['any_argv']> | ReuseScope>
  | Keys<ReusedAudit | ReusePreset | SubcommandReply | Action>
  | Keys<PlanRequest | PlanReply | StartUpFds | NonNullable<PlanReply['rerun_of']> | Ack>;

/** The field names the C side writes or reads (the escalation frames' are below). */
export const FIELDS = [
  'type', 'id', 'run_id', 'program', 'real_program', 'argv', 'cwd', 'pid', 'env', 'encoding', 'layer',
  'pair_run', 'kernel_argv', 'program_file', 'host_pid', 'action', 'reason', 'escalation_token', 'reuse',
  'grant', 'epoch', 'audit', 'scope', 'start', 'ppid', 'log', 'head', 'tail', 'message', 'code', 'subcommands', 'mntns',
  'shell', 'flag', 'script', 'sandbox_permissions', 'parent_run', 'justification', 'plan',
  'exit_status', 'duration_ms', 'stderr_tail', 'fds', 'shims', 'rerun_why', 'start_up_key', 'args',
  'env_set', 'env_unset', 'denials', 'sandboxed', 'rerun', 'rerun_any_status', 'script_fd', 'rerun_of',
  'start_up', 'notice', 'ready', 'go', 'info', 'presets', 'file', 'below_program', 'scoped_presets', 'any_argv',
] as const satisfies readonly WireField[];

/** The run-finished acknowledgement's info (src/daemon/daemon.ts): why a rerun outside the sandbox is asked. */
export const RUN_FINISHED_INFO_FIELDS = ['why', 'justification'] as const;

/** The escalation frames' fields (src/daemon/escalation-runner.ts): the token presented, and the answer. */
export const ESCALATION_FIELDS = ['token', 'env', 'encoding', 'exit_status', 'signal', 'error'] as const;

/**
 * A host socket masked one by one in a sandbox (src/sandbox/sockets.ts), spelled as bubblewrap's `--ro-bind-try
 * /dev/null <socket>` in a plan. The launcher takes these out of bubblewrap's options and mounts them itself in
 * the built sandbox before anything runs in it, skipping a socket gone by then (shims/gate-masks.h): sockets
 * come and go on the host while a sandbox is planned and built, and bubblewrap failed the whole run on a mount
 * point that vanished. Every other /dev/null bind (a protected missing file, a hidden secret) is `--ro-bind`
 * and is always bubblewrap's.
 */
export const SOCKET_MASK = { option: '--ro-bind-try', source: '/dev/null' } as const;

/**
 * The session holder's line protocol (shims/gate-session.c, src/daemon/session-sandbox.ts): the daemon
 * writes a verb a line; the holder answers with lines that start with one of `lines`. An error line is
 * `error <errno> <what>: <text>`: the daemon acts on the errno (EPERM or EINVAL from the namespaces
 * themselves: no session sandboxes here), never on the text.
 */
export const HOLDER_VERBS = { check: 'check', killall: 'killall' } as const;
export const HOLDER_LINES = { ready: 'ready', mounts: 'mounts', job: 'job', exit: 'exit', error: 'error' } as const;
/** The errno values (Linux) a holder's error reports that mean session sandboxes cannot be made here. */
export const HOLDER_UNAVAILABLE_ERRNOS = { EPERM: 1, EINVAL: 22 } as const;
