/**
 * When sandboxed runs of earlier daemons could write: kept in `$GATE_HOME/sandboxed-periods.jsonl`, so that
 * an escalated git after a restart still knows a repository, or a hook, made in one of those periods for the
 * sandbox's (src/daemon/git-trust.ts; before, a restart trusted everything older than its own first run).
 * Each daemon appends `{"d":id,"s":start,"e":last,"w":[folders]}` lines (`w` when a run named a folder not
 * yet written down: the folders its sandboxed runs could write, so that a repository the user cloned
 * elsewhere meanwhile is not taken for the sandbox's) (O_APPEND: several daemons of one GATE_HOME may
 * write at once) from its first sandboxed run on, and again every minute while it lives; a daemon that starts
 * folds the lines into one per daemon and writes them back, older periods merged when there are many (a
 * merge widens, never narrows). A period is taken to end two minutes after its last line (a daemon killed
 * between two lines). A last line cut short (a daemon killed while appending it) counts as a period from two
 * minutes before the file last changed until now, every folder in it: that daemon's first line is written at
 * its first sandboxed run, and a minute apart after. Any other unreadable line, or an unreadable file, fails
 * closed: everything before now counts as a period, until the file is mended.
 * Not pure: reads and writes that file. Trust boundary: GATE_HOME is read-only in every sandbox, so only
 * daemons (and the user) write it.
 */
import { appendFileSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';

/** From, until (ms), and the folders its sandboxed runs could write (real paths or as given). */
export type Period = readonly [number, number, readonly string[]];

/** The file's name in GATE_HOME. */
export const SANDBOXED_PERIODS_FILE = 'sandboxed-periods.jsonl';

const BEAT_MS = 60_000;
const MARGIN_MS = 2 * BEAT_MS;
const KEEP = 200;

export class SandboxedPeriods {
  private readonly past: Period[];
  private readonly id = `${process.pid}-${Date.now().toString(36)}`;
  private start?: number;
  private lastWrite = 0;
  private readonly folders = new Set<string>();
  private unwritten: string[] = [];

  constructor(
    private readonly file: string,
    private readonly log: (line: string) => void,
  ) {
    this.past = this.load();
  }

  /** Periods of earlier (or other) daemons, each widened by the margin. */
  earlier(): readonly Period[] {
    return this.past;
  }

  /** A sandboxed run starts, able to write `folders`: this daemon's period begins (once) and is written
   * down at most once a minute, or at once when it names a new folder. */
  sandboxedRun(folders: readonly string[], now = Date.now()): void {
    for (const f of folders) if (!this.folders.has(f) && this.folders.size < 4096) (this.folders.add(f), this.unwritten.push(f));
    if (this.start === undefined) {
      this.start = now;
      // while the daemon lives, a job left in its session sandbox may still write: no end but its death
      setInterval(() => this.write(Date.now()), BEAT_MS).unref();
    }
    if (now - this.lastWrite >= BEAT_MS / 2 || this.unwritten.length > 0) this.write(now);
  }

  private write(now: number): void {
    this.lastWrite = now;
    try {
      const w = this.unwritten.length > 0 ? { w: this.unwritten } : {};
      appendFileSync(this.file, `${JSON.stringify({ d: this.id, s: this.start, e: now, ...w })}\n`, { mode: 0o600 });
      this.unwritten = [];
    } catch (e) {
      this.log(`cannot write ${this.file}: ${(e as Error).message}`);
    }
  }

  /** The file's periods, folded per daemon and written back; a broken file counts as one period until now. */
  private load(): Period[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      this.log(`cannot read ${this.file} (${(e as Error).message}): every change before now counts as a sandboxed run's`);
      return [[0, Date.now(), ['/']]];
    }
    const byDaemon = new Map<string, Mutable>();
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    for (const [i, line] of lines.entries()) {
      let r: { d?: unknown; s?: unknown; e?: unknown; w?: unknown };
      try {
        r = JSON.parse(line);
      } catch {
        if (i === lines.length - 1 && !text.endsWith('\n')) {
          // cut short while appended: its daemon's period, bounded by when the file last changed
          const changed = statTime(this.file);
          this.log(`${this.file}: its last line was cut short; changes in every folder from ${new Date(changed - MARGIN_MS).toISOString()} on count as a sandboxed run's`);
          byDaemon.set(`cut-${i}`, [changed - MARGIN_MS, Date.now(), ['/']]);
          continue;
        }
        this.log(`${this.file} has a broken line (${i + 1}): every change before now counts as a sandboxed run's until it is mended`);
        return [[0, Date.now(), ['/']]];
      }
      if (typeof r.d !== 'string' || typeof r.s !== 'number' || typeof r.e !== 'number') continue;
      const w = Array.isArray(r.w) ? r.w.filter((x): x is string => typeof x === 'string') : [];
      const p = byDaemon.get(r.d);
      byDaemon.set(r.d, p ? [Math.min(p[0], r.s), Math.max(p[1], r.e), [...new Set([...p[2], ...w])]] : [r.s, r.e, w]);
    }
    const folded = merge([...byDaemon.values()]);
    try {
      const tmp = `${this.file}.${process.pid}`;
      writeFileSync(tmp, folded.map(([s, e, w], i) => `${JSON.stringify({ d: `folded-${i}`, s, e, w })}\n`).join(''), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (e) {
      this.log(`cannot fold ${this.file}: ${(e as Error).message}`);
    }
    return folded.map(([s, e, w]) => [s, e + MARGIN_MS, w] as const);
  }
}

type Mutable = [number, number, string[]];

/** When `file` last changed (ms); 0 when that cannot be told (the widest period). */
function statTime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Overlapping periods joined (their folders too); past KEEP, the oldest neighbours joined (wider, never
 * narrower). Pure. */
export function merge(periods: readonly Period[]): Mutable[] {
  const out: Mutable[] = [];
  for (const [s, e, w] of [...periods].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last && s <= last[1] + MARGIN_MS) (last[1] = Math.max(last[1], e)), (last[2] = [...new Set([...last[2], ...w])]);
    else out.push([s, e, [...w]]);
  }
  while (out.length > KEEP) {
    const [a, b] = out.splice(0, 2);
    out.unshift([a[0], Math.max(a[1], b[1]), [...new Set([...a[2], ...b[2]])]]);
  }
  return out;
}
