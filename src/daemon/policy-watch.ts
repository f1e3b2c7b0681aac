/**
 * Hot reload of rule files. Polls a cheap signature (stat of each watched file and folder listing) rather
 * than trusting fs.watch, which misses editors' rename-over saves and folders created later. A change is
 * debounced, then loaded; a broken edit is remembered (`lastError`): while it stands the daemon refuses
 * every run with its file:line:col (fail closed), and `status` shows it. Both the poll and the load run
 * with the daemon's reserve of descriptors free (fd-reserve.ts), so that no number of open connections can
 * make a reload fail.
 */
import { readdirSync, type Stats, statSync } from 'node:fs';
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
  private timer?: NodeJS.Timeout;
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

  start(intervalMs = 250, debounceMs = 100): void {
    this.timer = setInterval(() => {
      const s = this.signature();
      if (s === this.sig) return;
      this.sig = s;
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => this.reload(), debounceMs);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.debounce);
  }

  /** Reload now (after an amendment, or a detected change). Returns the error text when it failed. */
  reload(): string | undefined {
    this.sig = this.signature();
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

  private signatureNow(): string {
    const parts: string[] = [];
    for (const p of this.loader.watchPaths()) {
      const s = statOf(p);
      parts.push(statSig(p, s));
      // (not a folder, or missing: nothing to list; asked so rather than by readdir's exception, 4 times a second)
      if (!s?.isDirectory()) continue;
      let names: string[] = [];
      try {
        names = readdirSync(p).sort();
      } catch {
        continue;
      }
      for (const n of names) parts.push(statSig(join(p, n), statOf(join(p, n))));
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
