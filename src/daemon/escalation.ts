/**
 * The seam for escalated execs: when the daemon answers an exec with Escalate, it hands a
 * one-time grant to the EscalationRunner. The runner (src/exec/, descriptor passing on escalate.sock)
 * redeems the token when the shim connects with its descriptors, and spawns the command as decided.
 */
import { randomBytes } from 'node:crypto';
import type { EscalationExecution } from '../protocol/index.js';

export interface EscalationGrant {
  token: string;
  run_id: string;
  program: string;
  argv: string[];
  cwd: string;
  execution: EscalationExecution;
  /** the code-loading variables the decision saw (ExecRequest.env): the run gets these, no others */
  env?: Record<string, string>;
  /** it leaves the sandbox because every ancestor of the exec'ing process carries the model's text (an allow
   * rule: src/decide/provenance.ts, `widen`), read from a pid the request named (ExecRequest.host_pid, which
   * any process of the run can send): the runner redeems it only for a caller whose own ancestry, by the
   * kernel's word (SO_PEERCRED), reads so too */
  byAncestry?: true;
  expires_at: number;
}

export interface EscalationRunner {
  /** the daemon granted an escalation; the runner must only run exactly this, once */
  grant(g: EscalationGrant): void;
  /** the run ended: its grants not yet redeemed go (a finished run's id, read from the audit log, redeems
   * nothing) */
  endRun?(runId: string): void;
}

export function newEscalationToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Grants waiting for their shim; a runner without its own store can redeem from here. */
export class GrantTable implements EscalationRunner {
  private readonly grants = new Map<string, EscalationGrant>();

  constructor(private readonly now: () => number = Date.now) {}

  grant(g: EscalationGrant): void {
    this.expire();
    this.grants.set(g.token, g);
  }

  /** One-time: the grant is gone after this, whatever the outcome. */
  redeem(token: string): EscalationGrant | undefined {
    const g = this.grants.get(token);
    this.grants.delete(token);
    this.expire();
    return g && g.expires_at >= this.now() ? g : undefined;
  }

  get size(): number {
    return this.grants.size;
  }

  /** Every grant of this run goes (at most the grants of the last GRANT_TTL: a short walk). */
  endRun(runId: string): void {
    for (const [t, x] of this.grants) if (x.run_id === runId) this.grants.delete(t);
  }

  /** Grants whose shim never came: dropped from the oldest on, stopping at the first live one (grants
   * get the same lifetime, so insertion order is expiry order); never a walk over every grant. */
  private expire(): void {
    const now = this.now();
    for (const [t, x] of this.grants) {
      if (x.expires_at >= now) break;
      this.grants.delete(t);
    }
  }
}
