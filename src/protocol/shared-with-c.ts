/**
 * What the request channel's C side (shims/) shares with its TypeScript side, written once here: the
 * protocol version, the size limits, the exec gate's variables and which variables an ExecRequest carries.
 * shims/gate-shared.h is generated from this module (`npm run gen:c`, scripts/gen-c-header.mjs), and
 * test/protocol/shared-with-c.test.ts fails when the committed header says anything else.
 * Pure: constants only; imports nothing (the C side builds before any TypeScript does).
 */

export const PROTOCOL_VERSION = 1;
/** unix-dgram truncates silently above 64 KiB; stay well under it. */
export const MAX_DATAGRAM = 60 * 1024;
/** The exec gate's C client reads answers into this much room (GATE_REPLY_ROOM) and fetches a longer one
 * again over stream.sock by the same id: the daemon keeps replies longer than this. */
export const CLIENT_REPLY_ROOM = 8192;
/** Stream frames above this are refused (a 1 MiB script plus its environment fits). */
export const MAX_STREAM_FRAME = 64 * 1024 * 1024;

/** In the daemon's request folder (beside GATE_REQUEST_SOCK): the policy epoch, a little-endian 64-bit
 * count the daemon raises whenever its decisions may change (a rule reloaded, a new daemon); a supervisor
 * reuses an answer only while it still reads the epoch the answer came with (src/daemon/reuse-grants.ts). */
export const POLICY_EPOCH_FILE = 'policy_epoch';

/** The variables that tell a gated run's execs where to ask (set by the run plan, read by the C client). */
export const EXEC_GATE_VARIABLES = {
  run: 'GATE_RUN',
  requestSock: 'GATE_REQUEST_SOCK',
  streamSock: 'GATE_STREAM_SOCK',
  escalateSock: 'GATE_ESCALATE_SOCK',
  clientDir: 'GATE_CLIENT_DIR',
  execTimeoutMs: 'GATE_EXEC_TIMEOUT_MS',
  kernelSock: 'GATE_KERNEL_SOCK',
} as const;
export type ExecGateVariable = (typeof EXEC_GATE_VARIABLES)[keyof typeof EXEC_GATE_VARIABLES];

/**
 * The variables an ExecRequest reports (its `env`): by name, and by prefix. Wider than what the daemon
 * judges as code loading (src/heuristics/code-loading.ts, which the test checks is covered): the C side
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
