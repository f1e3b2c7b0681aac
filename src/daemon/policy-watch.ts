/**
 * Hot reload of rule files. Polls stat(2) of each watched path and of each file in a watched folder, rather
 * than trusting fs.watch, which misses editors' rename-over saves and folders created later. The polling
 * itself is libuv's (fs.watchFile: each path stat'ed off the main thread every period, compared in C: device,
 * inode, size, mode, owner, modification and change times in nanoseconds): the daemon's JavaScript runs only
 * when one of them changed (or appeared, or went), and then compares the signature (stat of each watched file
 * and the folders' listings) and watches the files a folder holds now. A file added to a folder changes the
 * folder's times; a file rewritten in place, its own. A change is debounced, then loaded; a broken edit is
 * remembered (`lastError`): while it stands the daemon refuses every run with its file:line:col (fail
 * closed), and `status` shows it. Both the signature and the load run with the daemon's reserve of
 * descriptors free (fd-reserve.ts), so that no number of open connections can make a reload fail.
 * Not pure: stats and lists the watched paths. The paths come from the daemon's own environment and config.
 */
import { readdirSync, type Stats, statSync, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';

export interface PolicyLoader<P> {
  /** throws (a located PolicyError) when a file is broken */
  load(): P;
  /** files and folders whose change means "reload" */
  watchPaths(): string[];
  /** the rule files a policy was loaded from */
  files(p: P): readonly string[];
}

export interface ReloadEvent {
  ok: boolean;
  error?: string;
  files: readonly string[];
}

/** Runs a synchronous piece of work with descriptors set aside for it (FdReserve). */
export interface Reserve {
  around<T>(f: () => T): T;
}

const NO_RESERVE: Reserve = { around: (f) => f() };

export class PolicyWatcher<P> {
  private policy: P;
  private sig: string;
  private debounce?: NodeJS.Timeout;
  loadedAt = new Date();
  lastError?: { message: string; at: Date };
  reloads = 0;

  /** Loads once: a broken rule file here throws (the daemon refuses to start). */
  constructor(
    private readonly loader: PolicyLoader<P>,
    private readonly onReload: (e: ReloadEvent) => void,
    private readonly reserve: Reserve = NO_RESERVE,
  ) {
    this.sig = this.signature();
    this.policy = reserve.around(() => loader.load());
  }

  get current(): P {
    return this.policy;
  }

  get files(): readonly string[] {
    return this.loader.files(this.policy);
  }

  /** Polls every path each `intervalMs` (libuv's stat watchers: see the header). */
  start(intervalMs = 250, debounceMs = 100): void {
    this.interval = intervalMs;
    this.debounceMs = debounceMs;
    this.started = true;
    this.rewatch();
  }

  stop(): void {
    this.started = false;
    for (const p of this.watched) unwatchFile(p, this.onStat);
    this.watched.clear();
    clearTimeout(this.debounce);
  }

  private interval = 250;
  private debounceMs = 100;
  private started = false;
  /** the paths stat'ed now (watchPaths and the files of those that are folders, as last listed) */
  private paths: string[] = [];
  private readonly watched = new Set<string>();
  /** a watched path changed (or a spurious call: compared all the same) */
  private readonly onStat = (): void => {
    if (!this.started) return;
    const s = this.signature();
    this.rewatch();
    if (s === this.sig) return;
    this.sig = s;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.reload(), this.debounceMs);
  };

  /** Watches the paths the last signature stat'ed, and no others. */
  private rewatch(): void {
    if (!this.started) return;
    const want = new Set(this.paths);
    for (const p of this.watched)
      if (!want.has(p)) {
        unwatchFile(p, this.onStat);
        this.watched.delete(p);
      }
    for (const p of want)
      if (!this.watched.has(p)) {
        // (persistent: false: the poll does not hold the daemon)
        watchFile(p, { persistent: false, interval: this.interval }, this.onStat);
        this.watched.add(p);
      }
  }

  /** Reload now (after an amendment, or a detected change). Returns the error text when it failed. */
  reload(): string | undefined {
    this.sig = this.signature();
    this.rewatch();
    try {
      this.policy = this.reserve.around(() => this.loader.load());
      this.loadedAt = new Date();
      this.lastError = undefined;
      this.reloads++;
      this.onReload({ ok: true, files: this.files });
      return undefined;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.lastError = { message, at: new Date() };
      this.onReload({ ok: false, error: message, files: this.files });
      return message;
    }
  }

  private signature(): string {
    return this.reserve.around(() => this.signatureNow());
  }

  /** The signature; `paths` becomes the paths it stat'ed. */
  private signatureNow(): string {
    const parts: string[] = [];
    const paths: string[] = [];
    this.paths = paths;
    for (const p of this.loader.watchPaths()) {
      const s = statOf(p);
      paths.push(p);
      parts.push(statSig(p, s));
      // (not a folder, or missing: nothing to list; asked so rather than by readdir's exception, 4 times a second)
      if (!s?.isDirectory()) continue;
      let names: string[] = [];
      try {
        names = readdirSync(p).sort();
      } catch {
        continue;
      }
      for (const n of names) {
        paths.push(join(p, n));
        parts.push(statSig(join(p, n), statOf(join(p, n))));
      }
    }
    return parts.join('|');
  }
}

/** stat(2) of p; undefined when missing or unreadable (a missing path is no exception here). */
function statOf(p: string): Stats | undefined {
  try {
    return statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function statSig(p: string, s: Stats | undefined): string {
  return s ? `${p}:${s.ino}:${s.size}:${s.mtimeMs}` : `${p}:-`;
}
