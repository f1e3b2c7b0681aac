/**
 * Runs: what pre-flight decided for each run_id, so the exec gate reuses those decisions (same argv + cwd
 * in the same run is never asked twice). Finished runs linger briefly for stragglers (background jobs).
 */
import { randomBytes } from 'node:crypto';
import type { Action } from '../protocol/action.js';
import type { PermissionProfile, SandboxPermissions } from '../sandbox/policy.js';

export interface RunRecord {
  run_id: string;
  cwd: string;
  pid: number;
  /** pid of the outermost gate-sh: this run's own pid, or its parent run's root_pid for a nested run */
  root_pid: number;
  started: number;
  finished?: number;
  sandbox_permissions: SandboxPermissions;
  additional_permissions?: PermissionProfile;
  /** argv+cwd key → the action pre-flight (or an earlier exec prompt) settled on */
  settled: Map<string, Action>;
  /** scriptKey → approval id ('' when no one was asked) of each `bash -c '<script>'` settled as allowed:
   * the nested shell's own pre-flight of that exact script (same cwd) is covered by it */
  scripts: Map<string, string>;
}

export function settleKey(argv: string[], cwd: string): string {
  return JSON.stringify([cwd, argv]);
}

export function scriptKey(script: string, cwd: string): string {
  return JSON.stringify([cwd, '-c', script]);
}

export class RunTable {
  private readonly runs = new Map<string, RunRecord>();

  constructor(private readonly lingerMs = 10 * 60_000) {}

  create(r: Omit<RunRecord, 'run_id' | 'started' | 'settled' | 'scripts'>): RunRecord {
    const rec: RunRecord = { ...r, run_id: `r-${randomBytes(9).toString('base64url')}`, started: Date.now(), settled: new Map(), scripts: new Map() };
    this.runs.set(rec.run_id, rec);
    this.sweep();
    return rec;
  }

  get(runId: string): RunRecord | undefined {
    return this.runs.get(runId);
  }

  finish(runId: string): RunRecord | undefined {
    const r = this.runs.get(runId);
    if (r) r.finished = Date.now();
    return r;
  }

  get size(): number {
    return this.runs.size;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, r] of this.runs) if (r.finished !== undefined && now - r.finished > this.lingerMs) this.runs.delete(id);
  }
}
