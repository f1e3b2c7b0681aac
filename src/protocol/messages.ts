/**
 * Wire messages of the request channel: the one definition both gate-sh/shims and the daemon import.
 * Encoding: one JSON object per datagram (UTF-8), at most MAX_DATAGRAM bytes; larger messages go over the
 * stream fallback socket framed as u32 little-endian length + JSON. Every message carries `v` and `id`;
 * a reply carries the `id` of its request. Nothing on this channel can approve anything.
 */
import type { Action, EscalationExecution } from './action.js';
import type { Decision } from '../rules/index.js';
import type { SandboxPermissions, WirePermissionProfile, WireSandboxPolicy, WireSecretsSetting } from './sandbox-policy.js';
import type { PlanRequest, PlanReply } from './plan.js';

/** Version and limits: shared with the C side, so written in shared-with-c.ts (shims/gate-shared.h). */
export { PROTOCOL_VERSION, MAX_DATAGRAM, CLIENT_REPLY_ROOM, MAX_STREAM_FRAME } from './shared-with-c.js';

/** gate-sh → daemon: decide every subcommand of a script before anything runs. */
export interface PreflightRequest {
  v: number;
  id: string;
  type: 'preflight';
  shell: string; // the shell gate-sh stands in for, e.g. "bash"
  flag: '-c' | '-lc';
  script: string;
  cwd: string;
  pid: number;
  sandbox_permissions: SandboxPermissions;
  additional_permissions?: WirePermissionProfile;
  justification?: string;
  /** `gate-sh --sandbox`: this call's sandbox at most (a host's own for its calls, e.g. Codex's through gate
   * mcp). The run and the runs started inside it get the stricter of it and the session's; never wider */
  sandbox_at_most?: WireSandboxPolicy;
  prefix_rule?: string[];
  /** "base64": script and cwd are base64 of raw bytes that are not valid UTF-8 (nested-shell shims) */
  encoding?: 'base64';
  /** the run this script was started from (a nested `bash -c` inside a gated run) */
  parent_run?: string;
  /** a line of an interactive session: the run of the session's long-lived bash, whose execs then carry
   * that run id; what this line's pre-flight settled is reused for them while the line runs */
  session_run?: string;
  /** false: ask nobody (an agent's permission hook asks its own user); a subcommand that needs a person is
   * answered Deny with its decision left 'prompt', so the caller can tell "ask" from "forbidden" */
  ask?: boolean;
  /** the client will run bash's start-up files (a login shell, BASH_ENV) before the script and asks for a
   * start-up phase (src/daemon/start-up.ts); only a client outside every sandbox can read the key */
  start_up?: StartUpRequest;
  /** the native gate-sh: build its run plan too (src/exec/client-plan.ts) */
  plan?: PlanRequest;
  /** the session settings the caller's environment names (GATE_SANDBOX_MODE, GATE_APPROVAL_POLICY, GATE_SECRETS_*): the daemon
   * refuses the call when they are not its own (src/config/config.ts settingsConflict); the native gate-sh's
   * are read from plan.env */
  settings?: Record<string, string>;
}

/** What the daemon needs to know about a run's start-up files, from the caller's environment. */
export interface StartUpRequest {
  key: string;
  home?: string;
  bash_env?: string;
  tmpdir?: string;
  /** names of exported shell functions (BASH_FUNC_*) in the caller's environment */
  functions: string[];
}

/** Where a decision came from: a rule (file:line) or a heuristic. */
export type DecisionSource =
  | { kind: 'rule'; file: string; line: number; pattern: string[]; justification?: string }
  | { kind: 'heuristic'; name: string }
  | { kind: 'session'; approval_id: string }
  /** a nested shell's script that its enclosing run already settled as a whole (`bash -c '<script>'`) */
  | { kind: 'parent-run'; run_id: string; approval_id?: string }
  | { kind: 'approval'; approval_id: string; answer: string; approver: string };

export interface SubcommandReply {
  argv: string[];
  decision: Decision;
  action: Action;
  source: DecisionSource[];
  approval_id?: string;
}

export interface PreflightReply {
  v: number;
  id: string;
  type: 'preflight';
  run_id: string; // names this run for exec-gate requests and audit records
  action: Action; // overall: Deny if any subcommand is denied
  complex: boolean;
  subcommands: SubcommandReply[];
  sandbox: WireSandboxPolicy; // the turn sandbox the script runs in
  /** the daemon's [secrets] setting, when it changes the default hidden credential locations
   * (src/sandbox/secrets.ts): every sandbox the client builds for this run hides what it says */
  secrets?: WireSecretsSetting;
  /** the run is in its start-up phase: the client ends it (start-up-end) before the script's first command */
  start_up?: boolean;
  /** the script is decided per exec (docs/strict.md): it runs in `sandbox`, which is then read-only unless a
   * person agreed to the writes it asked up front */
  per_exec?: boolean;
  /** `sandbox` is stricter than the turn's (gate-sh chose it for a per-exec script): a sandbox denial is
   * offered as the on-failure rerun even when the script exits 0 (src/exec/sandbox-denial.ts) */
  sandbox_narrowed?: boolean;
  /** when the request asked for one: what to run, exactly (src/exec/client-plan.ts) */
  plan?: PlanReply;
}

/** shim → daemon: one exec about to happen inside a gated run. */
export interface ExecRequest {
  v: number;
  id: string;
  type: 'exec';
  run_id: string;
  program: string; // resolved absolute path
  /** the program's real path when it differs (a symlink; fexecve's /proc/self/fd/N): its rules apply too */
  real_program?: string;
  argv: string[];
  cwd: string;
  pid: number;
  /** code-loading variables present in the exec's environment (LD_PRELOAD, BASH_ENV, ...), name → value */
  env?: Record<string, string>;
  /** "base64": program, argv, cwd and env values are base64 of raw bytes that are not valid UTF-8
   * (src/protocol/exec-gate-wire.ts decodes them) */
  encoding?: 'base64';
  /** "kernel": asked by the kernel layer's supervisor (shims/launch/decide.c) for an exec it stopped in the
   * kernel; `pid` is then the process's pid as it knows itself, read from /proc by the supervisor */
  layer?: 'kernel';
  /** kernel layer: the GATE_RUN the exec'ing process carries, to find the LD_PRELOAD layer's answer for
   * the same exec (src/daemon/exec-pairs.ts); the decision itself is made under `run_id` */
  pair_run?: string;
  /** kernel layer: where the daemon can read the very file the exec runs (/proc/<pid>/fd/<n> or
   * /proc/<pid>/root/<program>), to know it by its contents (src/daemon/program-identity.ts) */
  program_file?: string;
  /** the exec'ing process's pid in the daemon's pid namespace, added by the run's supervisor (the kernel's
   * notification, or the relay's SCM_CREDENTIALS): where the daemon reads how it was started
   * (src/daemon/provenance.ts). Untrusted like every field: it only picks which /proc entries are read, and an
   * escalation that rests on that reading is redeemed only by a process whose own ancestry reads so (the
   * escalation runner's SO_PEERCRED: EscalationGrant.byAncestry) */
  host_pid?: number;
  /** kernel layer, a `#!` script: the argv the kernel builds in front of argv[1..] (interpreter, its argument,
   * the script as the exec named it, at each level), as the supervisor read the `#!` lines before asking; the
   * exec is checked against it after it happened (src/decide/shebang.ts, shims/launch/follow.c) */
  kernel_argv?: string[];
}

export interface ExecReply {
  v: number;
  id: string;
  type: 'exec';
  action: Action;
  /** for Escalate: a one-time token the shim presents on the escalation socket with its descriptors */
  escalation_token?: string;
  /** Run holds for any argv of the same file, path, name and run (src/decide/reuse.ts): the run's
   * supervisor may give it again itself while the policy epoch (POLICY_EPOCH_FILE) stays `epoch`, writing
   * each such exec's audit record itself (`audit`) or telling the daemon of it with an ExecReused naming
   * `grant` */
  reuse?: {
    grant: string;
    epoch: number;
    audit?: ReusedAudit;
    scope?: ReuseScope;
    presets?: ReusePreset[];
    /** a scoped grant's: the other programs given one lately, each decided as this exec's process's exec of
     * it would be, held only below the same process (each with its `scope`, the grant's; a supervisor that
     * does not know this field leaves them out, rather than hold them everywhere) */
    scoped_presets?: ReusePreset[];
    /** a run's first scoped grant's (a build's): the any-argv presets, as `presets` would be, whose audit
     * records end with `tail` (their own source and decision) rather than this grant's; a supervisor that does
     * not know this field leaves them out, rather than record them as this grant's */
    any_argv?: { tail: string; presets: ReusePreset[] };
    /** the grant's program is a program running its own files by its name alone: wherever the grant is
     * reused, every exec below its new image is below one (src/decide/provenance.ts, ownFilesByName) */
    below_program?: true;
  };
  /** a Run of a kernel-layer exec whose new program's descendants (its forked children's execs and theirs)
   * are all below a program running its own files, so no rule ever takes them out of the sandbox: the
   * supervisor marks the new program, and its LD_PRELOAD layer leaves itself out of them
   * (src/daemon/provenance.ts, execBelowProgram; docs/exec-gate.md) */
  below_program?: true;
}

/** Another program's Run for the same run, handed over up front with `reuse` (its epoch and audit fields):
 * decided by the daemon as an exec of it would be, for any argv of that very file (src/daemon/reuse-presets.ts).
 * `file`: "<dev> <ino> <size> <mtime s> <mtime ns> <ctime s> <ctime ns>" as the daemon read it. */
export interface ReusePreset {
  program: string;
  grant: string;
  file: string;
  /** as ExecReply.reuse.below_program, for this program */
  below_program?: true;
  /** held only below this process, as ExecReply.reuse.scope (a scoped grant's `scoped_presets`; without it,
   * an entry there holds nowhere) */
  scope?: ReuseScope;
}

/** A reused Run that holds only for execs made below one process (a program running its own
 * files, src/decide/reuse.ts): that process as the daemon read it in /proc, its pid, its start time (clock
 * ticks since boot, /proc/<pid>/stat field 22) and its parent's pid, in the daemon's pid namespace. */
export interface ReuseScope {
  pid: number;
  start: number;
  ppid: number;
}

/** How a supervisor appends the audit record of an exec it answered from a reused Run, before the exec goes
 * on: one line `{"time":T,<head>,"cwd":C,"argv":A,<tail>}` appended with one write(2) to `log` (the daemon's
 * audit log). The daemon encodes every field but the exec's own time, cwd and argv. */
export interface ReusedAudit {
  log: string;
  head: string;
  tail: string;
}

/** supervisor → daemon, no reply: an exec answered from a reused Run (ExecReply.reuse); audited. The
 * exec's own inputs, as an ExecRequest has them. */
export interface ExecReused extends Omit<ExecRequest, 'type'> {
  type: 'exec-reused';
  grant: string;
}

/** gate-sh → daemon: the script finished (audit). */
export interface RunFinished {
  v: number;
  id: string;
  type: 'run-finished';
  run_id: string;
  exit_status: number;
  duration_ms: number;
  /** the native gate-sh, after a turn-sandbox attempt failed: the tail of its stderr. The ack's info then
   * carries `why` when the failure reads as a sandbox denial (src/exec/sandbox-denial.ts) */
  stderr_tail?: string;
}

/** gate-sh → daemon: bash has read its start-up files; from now on every exec of the run is the script's.
 * One-way: nothing turns a run's start-up phase back on. */
export interface StartUpEnd {
  v: number;
  id: string;
  type: 'start-up-end';
  run_id: string;
}

/** gate-sh → daemon: the namespaces of the session sandbox a run's plan joins (src/sandbox/session-join.ts). */
export interface SessionSandboxRequest {
  v: number;
  id: string;
  type: 'session-sandbox';
  /** sessionShape(plan).key */
  key: string;
  /** the sandbox has a network of its own (loopback only) */
  own_network: boolean;
  /** ignored (an older gate-sh's): a holder builds only mounts of a plan the daemon made itself, never what a
   * request names (src/daemon/session-sandbox.ts) */
  mounts?: string[];
}

/** gate-launch → daemon, no reply: the held mounts it was to enter (holder `pid`, namespace number `mntns`)
 * changed since they were built; the holder is to look and build them again (src/daemon/session-sandbox.ts). */
export interface SessionSandboxStale {
  v: number;
  id: string;
  type: 'session-sandbox-stale';
  pid: number;
  mntns: number;
}

/** A session sandbox's holder, as a command joins it (src/sandbox/session-join.ts). */
export interface SessionJoin {
  /** host pid of the holder (its pid namespace's pid 1) */
  pid: number;
  /** namespace inode numbers: pid, and network (0: the host's network) */
  pidns: number;
  netns: number;
  /** the mounts the holder keeps: on its descriptor fd, namespace inode ns, with `lines` mountinfo lines of
   * that digest (hex) when built; absent: each command builds its own */
  mounts?: { fd: number; ns: number; lines: number; digest: string };
}

export interface SessionSandboxReply {
  v: number;
  id: string;
  type: 'session-sandbox';
  /** null: no session sandbox for this run (it makes its own, as before) */
  join: SessionJoin | null;
}

export interface Ping {
  v: number;
  id: string;
  type: 'ping';
}

/** Daemon → client, while a human is being asked: the request is alive, keep waiting. */
export interface Pending {
  v: number;
  id: string;
  type: 'pending';
  approval_ids: string[];
}

export interface Ack {
  v: number;
  id: string;
  type: 'ack';
  info?: Record<string, unknown>;
}

/** refused: the request is well formed but nothing may run now (settings that are not the daemon's, a broken
 * rules file); its message says why and what to do */
export type ErrorCode = 'bad-version' | 'malformed' | 'too-large' | 'unknown-type' | 'unknown-run' | 'internal' | 'busy' | 'refused';

export interface ErrorReply {
  v: number;
  id: string;
  type: 'error';
  code: ErrorCode;
  message: string;
}

export type Request = PreflightRequest | ExecRequest | RunFinished | StartUpEnd | SessionSandboxRequest | SessionSandboxStale | Ping;
export type Reply = PreflightReply | ExecReply | SessionSandboxReply | Pending | Ack | ErrorReply;

export type { Action, EscalationExecution };
