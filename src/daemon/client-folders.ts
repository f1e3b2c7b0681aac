/**
 * Per-run client folders (no run can touch another's replies): the daemon makes
 * `<runtime>/<session>/req/c/<run id>` for each run it plans (src/paths/paths.ts runClientDir), the run's
 * sandbox sees and writes that folder alone (src/sandbox/bwrap-argv.ts requestDir; in a held session
 * sandbox shims/gate-join-folder.c), and the folder goes when the run has ended and no process of a session
 * sandbox still uses it (a background job outliving its command keeps its folder, and so its replies);
 * the folders of an earlier daemon (restarted under running commands) go once empty. At stop the folders
 * of runs still going stay for the next daemon.
 * Before, every sandboxed run of a session shared one writable `req/c`: a background job of one run that
 * unlinked what it found there made another run's requests fail after 35 s and its execs "did not answer".
 * Not pure: makes and removes folders. Trust boundary: the folders are the daemon's, made 0700 in its own
 * clients' folder; a name is always a run id the daemon drew (runClientDir refuses anything else).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type GatePaths, runClientDir } from '../paths/index.js';

/** A run id as the daemon draws them (src/daemon/runs.ts): the folders it may remove at start. */
const RUN_FOLDER = /^r-[A-Za-z0-9_-]{1,32}$/;

export class ClientFolders {
  /** run ids whose folder this daemon made and has not removed */
  private readonly made = new Set<string>();
  /** folders an earlier daemon of this session left: their runs may still be going (a daemon restarted
   * under running commands), unknown to this one; removed once nothing is left in them */
  private readonly adopted = new Set<string>();

  constructor(
    private readonly paths: Pick<GatePaths, 'clientDir'>,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Make the run's folder (owner-only, like the clients' folder): its path. */
  make(runId: string): string {
    const dir = runClientDir(this.paths, runId);
    mkdirSync(dir, { mode: 0o700 });
    this.made.add(runId);
    return dir;
  }

  /** The folder of a run whose folder this daemon made, or undefined. */
  of(runId: string): string | undefined {
    return this.made.has(runId) ? runClientDir(this.paths, runId) : undefined;
  }

  get size(): number {
    return this.made.size + this.adopted.size;
  }

  /** Remove the folders of runs that `keep` no longer needs (ended, and no process uses the folder), and
   * those an earlier daemon left once they are empty (their sockets' owners unlink them when they end). */
  prune(keep: (runId: string, dir: string) => boolean): void {
    for (const id of [...this.made]) {
      const dir = runClientDir(this.paths, id);
      if (!keep(id, dir)) this.remove(id, dir);
    }
    for (const id of [...this.adopted]) {
      const dir = join(this.paths.clientDir, id);
      let left: number;
      try {
        left = readdirSync(dir).length;
      } catch {
        left = 0;
      }
      if (left === 0 && !keep(id, dir)) this.remove(id, dir);
    }
  }

  /** Folders left behind by an earlier daemon of this session (stopped, or killed, while runs went on):
   * taken over, and removed once empty (prune). */
  adoptStale(): void {
    let names: string[];
    try {
      names = readdirSync(this.paths.clientDir);
    } catch {
      return;
    }
    for (const n of names) if (RUN_FOLDER.test(n) && !this.made.has(n)) this.adopted.add(n);
  }

  private remove(id: string, dir: string): void {
    this.made.delete(id);
    this.adopted.delete(id);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      this.log(`cannot remove the client folder of run ${id}: ${(e as Error).message}`);
    }
  }
}
