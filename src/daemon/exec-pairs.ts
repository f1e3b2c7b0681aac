/**
 * Pairing the two layers of the exec gate (docs/exec-gate.md, "One decision per exec"): an exec the
 * LD_PRELOAD layer asked about and was told to run (or escalate: the kernel layer lets that go on in place
 * either way) is remembered here, once, for a short while; when the
 * kernel layer's supervisor then reports the same exec, it is answered from here instead of being decided
 * (and audited, and perhaps prompted) a second time.
 *
 * Pure (a bounded map; the clock is passed in). Trust: the key is every input of the decision — the run the
 * exec'ing process carries, its pid as it knows itself, program, argv, cwd and code-loading variables — and
 * the kernel layer's half of it is read by the supervisor from the process itself. A pair forged from
 * inside the run can therefore only let through an exec that the daemon has just answered Run for, with
 * exactly these inputs.
 */
import type { ExecRequest } from '../protocol/index.js';

/** How long an LD_PRELOAD-layer Run or Escalate waits for its exec (the shim execs right after the answer). */
export const PAIR_TTL_MS = 30_000;
export const MAX_PAIRS = 10_000;

export function pairKey(run: string, req: Pick<ExecRequest, 'pid' | 'program' | 'argv' | 'cwd' | 'env'>): string {
  const env = req.env ? Object.keys(req.env).sort().map((k) => [k, req.env![k]]) : [];
  return JSON.stringify([run, req.pid, req.program, req.argv, req.cwd, env]);
}

export class ExecPairs {
  /** key → expiry; insertion order is expiry order (one TTL), so the oldest go first */
  private readonly pairs = new Map<string, number>();

  add(key: string, now: number): void {
    this.pairs.delete(key);
    this.pairs.set(key, now + PAIR_TTL_MS);
    this.expire(now);
    if (this.pairs.size > MAX_PAIRS) this.pairs.delete(this.pairs.keys().next().value!);
  }

  /** True once for a key added within the TTL. */
  take(key: string, now: number): boolean {
    const t = this.pairs.get(key);
    if (t === undefined) return false;
    this.pairs.delete(key);
    return t >= now;
  }

  get size(): number {
    return this.pairs.size;
  }

  private expire(now: number): void {
    for (const [k, t] of this.pairs) {
      if (t >= now) break;
      this.pairs.delete(k);
    }
  }
}
