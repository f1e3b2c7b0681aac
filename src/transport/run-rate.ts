/**
 * A run's request rate, bounded: a token bucket per key (the run a request names, else where it came from).
 * A request over its key's rate waits in that key's queue, and the queues are drained in turn as their
 * buckets fill, so a run that floods the daemon waits for itself while other runs' requests go on; past
 * its queue's bound a request is dropped unanswered (its client resends it by the same id, as after any
 * lost datagram). Waiting, not refusing: the exec gate's C client takes an error answer as final.
 * Bookkeeping only (timers, no sockets). Trust: the key is what the request names; a request bound to its
 * run makes it the run's own.
 */

export interface RateLimits {
  /** requests a key may start per second, sustained */
  perSecond: number;
  /** and at once, after a quiet spell */
  burst: number;
  /** requests of a key waiting at most; beyond, dropped */
  queued: number;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { perSecond: 5_000, burst: 5_000, queued: 5_000 };

interface Bucket {
  tokens: number;
  at: number;
  waiting: (() => void)[];
  /** the first still waiting in `waiting` (a head index: shifting an array of thousands is quadratic) */
  head: number;
}

export class RateQueues {
  private readonly buckets = new Map<string, Bucket>();
  private timer?: NodeJS.Timeout;
  readonly counters = { delayed: 0, dropped: 0 };

  constructor(
    private readonly limits: RateLimits = DEFAULT_RATE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * start now (true), or later when the key's turn comes (false: `start` is kept), or never (false and
   * `dropped` called at once: the key's queue is full).
   */
  admit(key: string, start: () => void, dropped: () => void): boolean {
    const b = this.bucket(key);
    this.fill(b);
    if (b.head === b.waiting.length && b.tokens >= 1) {
      b.tokens -= 1;
      return true;
    }
    if (b.waiting.length - b.head >= this.limits.queued) {
      this.counters.dropped++;
      dropped();
      return false;
    }
    this.counters.delayed++;
    b.waiting.push(start);
    this.arm();
    return false;
  }

  /** Keys remembered now (a quiet, full one is forgotten at the next sweep). */
  get keys(): number {
    return this.buckets.size;
  }

  /** Requests waiting, all keys together. */
  get waiting(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.waiting.length - b.head;
    return n;
  }

  close(): void {
    clearTimeout(this.timer);
    this.buckets.clear();
  }

  /** Forget keys that are quiet and full (called now and then). */
  sweep(): void {
    for (const [k, b] of this.buckets) {
      this.fill(b);
      if (b.head === b.waiting.length && b.tokens >= this.limits.burst) this.buckets.delete(k);
    }
  }

  private bucket(key: string): Bucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.limits.burst, at: this.now(), waiting: [], head: 0 };
      this.buckets.set(key, b);
    }
    return b;
  }

  private fill(b: Bucket): void {
    const t = this.now();
    b.tokens = Math.min(this.limits.burst, b.tokens + ((t - b.at) * this.limits.perSecond) / 1000);
    b.at = t;
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, 5);
  }

  /** Each waiting key in turn starts what its bucket allows. */
  private drain(): void {
    let left = false;
    for (const b of this.buckets.values()) {
      if (b.head === b.waiting.length) continue;
      this.fill(b);
      while (b.tokens >= 1 && b.head < b.waiting.length) {
        b.tokens -= 1;
        const start = b.waiting[b.head];
        b.waiting[b.head++] = NOOP;
        start();
      }
      if (b.head === b.waiting.length) {
        b.waiting = [];
        b.head = 0;
      } else left = true;
    }
    if (left) this.arm();
  }
}

const NOOP = (): void => {};
