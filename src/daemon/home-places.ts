/**
 * The gate's and Codex's homes stay where the daemon found them. A run without a sandbox cannot write in them
 * (the gate's guard binds them read-only: src/sandbox/gate-state.ts), and rename(2) refuses a mount point,
 * but not a folder above one: such a run can move a folder above a home aside and make another home in its
 * place, with rules of its own (or none), which a reload would then read as the user's. So the daemon
 * records, when it starts, each home's folders from `/` down (device and inode of each that exists), and every
 * load finds them the same or fails: the daemon then refuses every run with the reason, as for a broken rules
 * file, until it is started again. A folder missing then and made later (a home the guard creates) is no
 * change.
 * Not pure: stats the folders. Trust boundary: the paths are the daemon's own (its environment); what they
 * lead to now is what a run may have changed.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';

export class HomePlaces {
  /** per home: its folders from the top down, each with its identity when the daemon started (none: missing) */
  private readonly homes: { home: string; folders: { path: string; id: string | undefined }[] }[];

  constructor(homes: readonly string[]) {
    this.homes = homes.map((home) => ({ home, folders: foldersOf(home).map((path) => ({ path, id: identity(path) })) }));
  }

  /** Throws (a message for the user) when a folder that existed at the start is another one now, or gone. */
  check(): void {
    for (const { home, folders } of this.homes)
      for (const f of folders)
        if (f.id !== undefined && identity(f.path) !== f.id)
          throw new Error(
            `${home}: the folder ${f.path} is not the one the daemon started with (moved or replaced while it ran): ` +
              `rules read there now are not known to be yours, and every run is refused; a run without a sandbox may have moved ` +
              `it aside and made another: check what is there before starting the daemon again ('gate daemon restart'), which takes it as it is`,
          );
  }
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`. */
function foldersOf(path: string): string[] {
  const out = [path];
  for (let p = path; dirname(p) !== p; p = dirname(p)) out.unshift(dirname(p));
  return out;
}

/** Device and inode of the folder at path (links followed, as the loader reads it); undefined when missing. */
function identity(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true, throwIfNoEntry: false });
    return s ? `${s.dev}:${s.ino}` : undefined;
  } catch {
    return undefined;
  }
}
