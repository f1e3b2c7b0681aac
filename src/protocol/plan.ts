/**
 * The run plan on the wire: what the native gate-sh sends with its pre-flight (PlanRequest) and
 * what the daemon answers (PlanReply), built by src/exec/client-plan.ts. Types only.
 */

/** Descriptor numbers (as bash sees them) of the start-up phase's two pipes (src/exec/start-up-gate.ts). */
export interface StartUpFds {
  /** bash writes one byte here once its start-up files are read */
  ready: number;
  /** bash reads one byte here before the script's first command */
  go: number;
}

/** What the native client sends with its pre-flight (PreflightRequest.plan). */
export interface PlanRequest {
  /** gate-sh's arguments (after argv[0]) */
  argv: string[];
  /** the name bash's $0 defaults to (what Node's process.argv[1] would be) */
  argv0: string;
  /** the client's environment, "NAME=value" in order */
  env: string[];
  /** descriptors above 2 the client inherited */
  fds: number[];
  /** the client's shims folder (libgate.so, bin/) */
  shims: string;
  /** set on the on-failure rerun's pre-flight: the denial it asks about (src/exec/sandbox-rerun.ts) */
  rerun_why?: string;
  /** the start-up key the client read from the approval folder (src/exec/start-up-gate.ts), if it could */
  start_up_key?: string;
}

/** The daemon's plan, in its pre-flight reply (PreflightReply.plan). */
export interface PlanReply {
  /** nothing runs: print these lines (each prefixed `gate-sh: `) and exit 126 */
  denials?: string[];
  /** nothing runs: `gate-sh: <error>; nothing ran`, exit 126 */
  error?: string;
  /** print this line first (`gate-sh: <notice>`), then run the plan (an escalation the daemon kept in the
   * turn sandbox says why) */
  notice?: string;
  program?: string;
  args?: string[];
  cwd?: string;
  /** "NAME=value": replace in place, or append in this order */
  env_set?: string[];
  /** names to remove */
  env_unset?: string[];
  /** program is bubblewrap around bash: signals go to bash, bwrap gets its own session */
  sandboxed?: boolean;
  /** relay stderr and offer the on-failure rerun after a failure (a turn-sandbox attempt) */
  rerun?: boolean;
  /** with rerun: after an exit status of 0 too (the attempt's sandbox is stricter than the turn's, so a
   * denial gate-sh caused is offered even when the script masked it); the daemon decides */
  rerun_any_status?: boolean;
  /** a large script: bash reads `prelude + script` from this descriptor */
  script_fd?: { fd: number; prelude: string };
  /** on a rerun pre-flight: whether to run it, and the notice to print first */
  rerun_of?: { rerun: boolean; notice?: string };
  /** the run has a start-up phase: bash writes a byte on `ready` once its start-up files are read; the
   * client ends the phase (start-up-end) and only then writes a byte on `go` */
  start_up?: StartUpFds;
}
