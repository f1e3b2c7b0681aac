/**
 * Protected paths a run made: agents' and editors' configuration in
 * the workspace (`.claude`, `.codex`, `.vscode`...: src/sandbox/protected.ts) and a `.git` in a writable
 * folder above it. Present ones are read-only in the sandbox; missing ones get no placeholder (it would be a
 * trace in the user's folder and visible to the run), so the daemon notes which are missing when a sandboxed
 * run starts and, when the run finishes, moves aside whatever appeared there (`<name>.gate-sh-planted-<run>`,
 * kept, not deleted: the user may want to see it) and says so in its log and the audit log.
 *
 * Limits (docs/sandbox.md): between the write and the run's end, what was planted is there for a program on
 * the host that reads it at that moment (Claude Code reads its hooks at start-up only); a background job left
 * in the session sandbox that writes after its run finished is not caught (the next run sees the path as
 * present, so read-only, but does not move it). Also moved: such a folder made on the host by the user while
 * a run was going on in that folder.
 * Not pure: stats and renames on the host. Trust boundary: the paths are the daemon's own list joined to the
 * run's cwd as its client (outside the sandbox) reported it; a run can only make the daemon move aside a
 * protected name it made, and never through a symlink (a folder on the way that is one is left alone).
 */
import { lstatSync, realpathSync, renameSync } from 'node:fs';
import { posix } from 'node:path';
import { missingProtected, nodeFs, protectedNames, type SandboxPolicy } from '../sandbox/index.js';

export interface Moved {
  from: string;
  to: string;
}

const MAX_WATCHED = 4096;

export class PlantWatch {
  /** run id → protected paths missing when it started (bounded: a run whose client never said it finished) */
  private readonly watched = new Map<string, string[]>();

  /** At a run's start: which protected paths it could make. Only a sandbox that writes the workspace. */
  start(runId: string, cwd: string, policy: SandboxPolicy, env: Readonly<Record<string, string | undefined>>): void {
    if (policy.type !== 'workspace-write') return;
    const real = realOrNull(cwd);
    if (real === null) return;
    const roots = [real, ...policy.writable_roots, ...(policy.agent_writable_roots ?? [])];
    if (!policy.exclude_slash_tmp) roots.push('/tmp');
    if (!policy.exclude_tmpdir_env_var && env.TMPDIR?.startsWith('/')) roots.push(env.TMPDIR);
    const paths = missingProtected(real, roots.map((r) => realOrNull(r) ?? r), nodeFs, protectedNames(env));
    if (paths.length === 0) return;
    if (this.watched.size >= MAX_WATCHED) this.watched.delete(this.watched.keys().next().value as string);
    this.watched.set(runId, paths);
  }

  /** At a run's end: every watched path that exists now is moved aside. */
  finish(runId: string): Moved[] {
    const paths = this.watched.get(runId);
    if (!paths) return [];
    this.watched.delete(runId);
    const moved: Moved[] = [];
    for (const p of paths) {
      if (!exists(p)) continue;
      // never through a symlink: the folder must be where it was (a run may re-point a folder above its cwd)
      if (realOrNull(posix.dirname(p)) !== posix.dirname(p)) continue;
      const to = `${p}.gate-sh-planted-${runId}`;
      try {
        renameSync(p, to);
        moved.push({ from: p, to });
      } catch {
        // gone meanwhile, or its folder is not writable to the daemon
      }
    }
    return moved;
  }
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}
