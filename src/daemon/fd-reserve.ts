/**
 * Descriptors held in reserve for the daemon's own work, so that whatever else uses descriptors (stream and
 * escalation connections, session sandboxes, escalated commands' pipes) can never make a rule reload fail
 * for want of one (EMFILE would keep the old rules: a newly forbidden command would still run). The
 * reserve is a few descriptors of /dev/null, released just before a synchronous piece of work and taken
 * again right after it: nothing else of this process can take them in between (one thread runs JS).
 * Not pure (descriptors). Trust: none needed; it only opens /dev/null.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';

export class FdReserve {
  private held: number[] = [];

  constructor(private readonly size = 16) {
    this.refill();
  }

  /** Runs f with the reserve's descriptors free, then takes them again. */
  around<T>(f: () => T): T {
    this.release();
    try {
      return f();
    } finally {
      this.refill();
    }
  }

  get count(): number {
    return this.held.length;
  }

  close(): void {
    this.release();
  }

  private release(): void {
    for (const fd of this.held.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        /* closed */
      }
    }
  }

  /** Takes what it can now; a short reserve is topped up at the next call. */
  private refill(): void {
    while (this.held.length < this.size) {
      try {
        this.held.push(openSync('/dev/null', 'r'));
      } catch {
        return;
      }
    }
  }
}

/** The soft limit on open descriptors of this process (RLIMIT_NOFILE), from /proc; undefined when unknown. */
export function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!m) return undefined;
    return m[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(m[1]);
  } catch {
    return undefined;
  }
}
