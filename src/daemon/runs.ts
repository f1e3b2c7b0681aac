/**
 * Runs: what pre-flight decided for each run_id, so the exec gate reuses those decisions (same argv + cwd
 * in the same run is never asked twice). Finished runs linger briefly for their audit records, but what
 * they settled ends with them (`live`): a run id is in the audit log, which sandboxes can read, so a
 * finished run's approvals must not be reused by whoever names it.
 * Bounded: a run whose client never reports run-finished goes once its outermost gate-sh is gone, or after
 * a long idle time, and the table never holds more than `maxRuns` (the least recently used go first). A
 * finished run keeps only what its stragglers' audit records and folder checks read (no settlements), and
 * at most `maxFinished` finished runs are kept (the earliest finished go first): kept whole for their ten
 * minutes, 10,000 `gate-sh -lc` calls left 10,000 records in the old generation.
 * Sweeping is time-gated, so creating a run costs O(1) however many runs there are.
 */
import { RandomIds } from './random-ids.js';
import type { Action, SandboxPermissions } from '../protocol/index.js';
import type { PermissionProfile, SandboxPolicy } from '../sandbox/index.js';

export interface RunRecord {
  run_id: string;
  cwd: string;
  pid: number;
  /** pid of the outermost gate-sh: this run's own pid, or its parent run's root_pid for a nested run */
  root_pid: number;
  started: number;
  /** last pre-flight or exec-gate use of this run */
  used: number;
  finished?: number;
  sandbox_permissions: SandboxPermissions;
  additional_permissions?: PermissionProfile;
  /** what this run alone settled (a prompt's answer, an exec-time decision); made on first use */
  own?: Settlement;
  /** what pre-flight settled when the policy's own Actions stood: one Settlement shared by every run of
   * the same cached script in the same cwd (a run then costs a few fields, not two maps of its own) */
  shared?: Settlement;
  /** [shell, flag, script] as pre-flight saw it (the run's audit record) */
  command?: string[];
  /** whose client folder the run's clients reply to (src/daemon/client-folders.ts): the run's own id, or the
   * folder of the run it was asked from (a nested shell's run lives in its enclosing run's sandbox) */
  folder?: string;
  /** the run folder its pre-flight was asked from, if any (a gate-sh started inside another run): its
   * requests may come from there too */
  askedFrom?: string;
  /** an interactive session's run: the run of the line its bash is running now (PreflightRequest.session_run) */
  current?: string;
  /** set while bash reads its start-up files (src/daemon/start-up.ts); cleared for good by start-up-end.
   * sandboxed: bash runs in the turn sandbox (else a start-up exec is sent into it) */
  startUp?: { sandboxed: boolean };
  /** pre-flight ran it in a sandbox stricter than the turn's (a per-exec script): its run-finished decision
   * counts a denial whatever the exit status */
  sandboxNarrowed?: boolean;
  /** the run's own sandbox at most (its call's `gate-sh --sandbox`, within its enclosing run's): it runs in the
   * stricter of this and the session's (run-sandbox.ts) */
  atMost?: SandboxPolicy;
  /** its shell, its enclosing run's or its interactive session's runs text the script does not spell out (a
   * sourced file, eval, a command string or name known at run time): no exec of it leaves the sandbox by a
   * rule (ExecContext.foreignText) */
  foreignText?: boolean;
  /** a nested shell's script its enclosing run's pre-flight did not settle (read from a file, built at run time,
   * a program's own file's `bash -c`): what this run's own pre-flight settles takes nothing out of the sandbox
   * (its commands are judged, but the text may not be the model's); implies foreignText */
  foreignScript?: boolean;
}

export interface Settlement {
  /** argv+cwd key → the action pre-flight (or an earlier exec prompt) settled on */
  settled: Map<string, Action>;
  /** scriptKey → approval id ('' when no one was asked) of each `bash -c '<script>'` settled as allowed:
   * the nested shell's own pre-flight of that exact script (same cwd) is covered by it */
  scripts: Map<string, string>;
}

export function newSettlement(): Settlement {
  return { settled: new Map(), scripts: new Map() };
}

/** The action this run settled for an argv+cwd key, if any. */
export function settledAction(r: RunRecord, key: string): Action | undefined {
  return r.own?.settled.get(key) ?? r.shared?.settled.get(key);
}

/** The approval id ('' when nobody was asked) that settled a nested script for this run, if any. */
export function settledScript(r: RunRecord, key: string): string | undefined {
  return r.own?.scripts.get(key) ?? r.shared?.scripts.get(key);
}

export function settleKey(argv: string[], cwd: string): string {
  return JSON.stringify([cwd, argv]);
}

export function scriptKey(script: string, cwd: string): string {
  return JSON.stringify([cwd, '-c', script]);
}

export interface RunTableOptions {
  /** how long a finished run stays for stragglers (background jobs) */
  lingerMs?: number;
  /** an unfinished run unused this long whose root gate-sh is gone is dropped */
  deadGraceMs?: number;
  /** an unfinished run unused this long is dropped whatever its pid says */
  maxIdleMs?: number;
  /** hard cap on the table; the least recently used run goes first */
  maxRuns?: number;
  /** finished runs kept at most; the earliest finished goes first */
  maxFinished?: number;
  /** at most one sweep per this interval */
  sweepEveryMs?: number;
  now?: () => number;
  /** is the process alive? (its pid as the daemon sees it) */
  alive?: (pid: number) => boolean;
}

/** kill(pid, 0): ESRCH means gone; EPERM means alive (someone else's process, so not ours). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class RunTable {
  /** in least-recently-used order: `get` and `create` move a run to the back */
  private readonly runs = new Map<string, RunRecord>();
  /** the finished runs' ids, in the order they finished */
  private readonly ended = new Set<string>();
  private nextSweep = 0;
  /** unguessable: a run id lets an exec reuse the run's settled decisions (72 random bits) */
  private readonly ids = new RandomIds(9);
  private readonly o: Required<RunTableOptions>;

  constructor(opts: RunTableOptions = {}) {
    this.o = {
      lingerMs: 10 * 60_000,
      // pids inside a sandbox's pid namespace mean nothing here: only root_pid (the outermost gate-sh,
      // outside) is asked, and only after a grace period without use
      deadGraceMs: 60_000,
      maxIdleMs: 24 * 3600_000,
      maxRuns: 10_000,
      maxFinished: 1_000,
      sweepEveryMs: 1_000,
      now: Date.now,
      alive: pidAlive,
      ...opts,
    };
  }

  create(r: Omit<RunRecord, 'run_id' | 'started' | 'used' | 'own' | 'shared'>): RunRecord {
    const now = this.o.now();
    // spelled out: an object spread costs ~10 µs here, a third of a cached pre-flight
    const rec: RunRecord = {
      run_id: `r-${this.ids.next()}`,
      cwd: r.cwd,
      pid: r.pid,
      root_pid: r.root_pid,
      started: now,
      used: now,
      sandbox_permissions: r.sandbox_permissions,
      additional_permissions: r.additional_permissions,
      command: r.command,
    };
    this.runs.set(rec.run_id, rec);
    if (this.runs.size > this.o.maxRuns) this.evictLeastRecentlyUsed(Math.ceil(this.o.maxRuns / 10));
    if (now >= this.nextSweep) this.sweep(now);
    return rec;
  }

  get(runId: string): RunRecord | undefined {
    const r = this.runs.get(runId);
    if (r) {
      r.used = this.o.now();
      this.runs.delete(runId); // LRU: to the back
      this.runs.set(runId, r);
    }
    return r;
  }

  /** The run while it has not finished (counts as a use): only a live run's settlements, permissions and
   * approvals are reused. */
  live(runId: string): RunRecord | undefined {
    const r = this.get(runId);
    return r && r.finished === undefined ? r : undefined;
  }

  /** The run, without counting as a use (a look that must not keep an abandoned run alive). */
  peek(runId: string): RunRecord | undefined {
    return this.runs.get(runId);
  }

  /** Whether the run is known, without counting as a use. */
  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Marks the run finished: what it settled ends with it (only a live run's settlements are reused). */
  finish(runId: string): RunRecord | undefined {
    const r = this.runs.get(runId);
    if (!r) return r;
    r.finished = this.o.now();
    r.own = undefined;
    r.shared = undefined;
    this.ended.add(runId);
    if (this.ended.size > this.o.maxFinished) this.forgetEarliestFinished(Math.ceil(this.o.maxFinished / 10));
    return r;
  }

  get size(): number {
    return this.runs.size;
  }

  /** Finished runs kept now (each at most lingerMs, at most maxFinished). */
  get finishedCount(): number {
    return this.ended.size;
  }

  /** In one pass, as evictLeastRecentlyUsed. */
  private forgetEarliestFinished(n: number): void {
    for (const id of this.ended) {
      if (n-- <= 0) break;
      this.ended.delete(id);
      this.runs.delete(id);
    }
  }

  /** Runs not finished whose outermost gate-sh still lives (what a stop would end), one per outermost gate-sh. */
  active(): RunRecord[] {
    const byRoot = new Map<number, RunRecord>();
    for (const r of this.runs.values())
      if (r.finished === undefined && !byRoot.has(r.root_pid) && this.o.alive(r.root_pid)) byRoot.set(r.root_pid, r);
    return [...byRoot.values()];
  }

  /** In one pass (a Map's front fills with holes as it is deleted from, so one at a time would be quadratic). */
  private evictLeastRecentlyUsed(n: number): void {
    for (const id of this.runs.keys()) {
      if (n-- <= 0) break;
      this.runs.delete(id);
      this.ended.delete(id);
    }
  }

  /** Drop expired finished runs and abandoned unfinished ones. O(runs), at most once per sweepEveryMs. */
  sweep(now = this.o.now()): void {
    this.nextSweep = now + this.o.sweepEveryMs;
    const alive = new Map<number, boolean>(); // one kill(2) per pid per sweep
    const isAlive = (pid: number): boolean => {
      let a = alive.get(pid);
      if (a === undefined) alive.set(pid, (a = this.o.alive(pid)));
      return a;
    };
    for (const [id, r] of this.runs) {
      const gone =
        r.finished !== undefined
          ? now - r.finished > this.o.lingerMs
          : now - r.used > this.o.maxIdleMs || (now - r.used > this.o.deadGraceMs && !isAlive(r.root_pid));
      if (!gone) continue;
      this.runs.delete(id);
      this.ended.delete(id);
    }
  }
}
