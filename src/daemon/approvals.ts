/**
 * ApprovalBroker: pending prompts and attached approvers. A prompt with no approver attached is denied at
 * once; with approvers it waits up to the timeout. The first valid answer wins; later ones are told
 * "already answered".
 */
import { randomUUID } from 'node:crypto';
import { type ApproverKind, type PromptEvent, type ResolvedEvent, type ReviewDecision, reviewDecisionKind } from '../protocol/index.js';
import type { Approver } from './approver.js';

export type PromptRequest = Omit<PromptEvent, 'approval_id' | 'created_at' | 'expires_at' | 'number'>;

export interface ApprovalOutcome {
  approval_id: string;
  decision: ReviewDecision;
  approver: string;
  /** what kind of approver answered (absent: the daemon itself, or a caller that did not attach) */
  kind?: ApproverKind;
  /** why the daemon answered by itself */
  auto?: 'no-approver' | 'timeout' | 'shutdown' | 'cancelled';
}

export type AnswerResult = { ok: true } | { ok: false; error: string };

interface Pending {
  event: PromptEvent;
  resolve(o: ApprovalOutcome): void;
  timer?: NodeJS.Timeout;
}

export class ApprovalBroker {
  private readonly approvers = new Set<Approver>();
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new Map<string, string>(); // approval_id → approver (recent)
  /** prompts asked so far in this session: each gets the next number, for people ("approval #3") */
  private asked = 0;

  /** `eligible`: a session-wide filter on top of each approver's own `accepts` (e.g. reject.mcp_elicitations) */
  constructor(
    private readonly timeoutMs: () => number,
    private readonly eligible: (a: Approver, p: PromptEvent) => boolean = () => true,
  ) {}

  attach(a: Approver): () => void {
    this.approvers.add(a);
    for (const p of this.pending.values()) if (this.shows(a, p.event)) a.prompt(p.event);
    return () => this.approvers.delete(a);
  }

  /** Whether a prompt goes to this approver. */
  shows(a: Approver, p: PromptEvent): boolean {
    return this.eligible(a, p) && (a.accepts?.(p) ?? true);
  }

  /** Whether anyone would be shown a prompt like this (fields the filters read: client_pid, run_id, ...). */
  hasApproverFor(p: PromptEvent): boolean {
    for (const a of this.approvers) if (this.shows(a, p)) return true;
    return false;
  }

  approverNames(): string[] {
    return [...this.approvers].map((a) => a.name);
  }

  pendingPrompts(): PromptEvent[] {
    return [...this.pending.values()].map((p) => p.event);
  }

  /** Ask. `done` resolves with the answer, or a denial when nobody can answer; it never rejects. */
  ask(req: PromptRequest, approval_id: string = randomUUID()): { approval_id: string; done: Promise<ApprovalOutcome> } {
    const ms = this.timeoutMs();
    const now = Date.now();
    const event: PromptEvent = {
      ...req,
      approval_id,
      number: ++this.asked,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + ms).toISOString(),
    };
    const to = [...this.approvers].filter((a) => this.shows(a, event));
    if (to.length === 0) return { approval_id, done: Promise.resolve({ approval_id, decision: 'denied', approver: 'daemon', auto: 'no-approver' }) };
    const done = new Promise<ApprovalOutcome>((resolve) => {
      const p: Pending = { event, resolve };
      p.timer = setTimeout(() => this.finish(approval_id, { approval_id, decision: 'denied', approver: 'daemon', auto: 'timeout' }, 'timed out'), ms);
      this.pending.set(approval_id, p);
    });
    for (const a of to) safe(() => a.prompt(event));
    return { approval_id, done };
  }

  /** Withdraw prompts whose answer no longer matters (another subcommand of the same script was denied). */
  cancel(ids: string[], note: string): void {
    for (const id of ids) this.finish(id, { approval_id: id, decision: 'abort', approver: 'daemon', auto: 'cancelled' }, note);
  }

  /** `from`: the attached approver answering, held to the prompts it is shown (an MCP server answers only its own runs). */
  answer(approval_id: string, decision: ReviewDecision, approver: string, from?: Approver): AnswerResult {
    const p = this.pending.get(approval_id);
    if (!p) {
      const by = this.answered.get(approval_id);
      return { ok: false, error: by ? `already answered (by ${by})` : `no pending prompt ${approval_id}` };
    }
    if (from && !this.shows(from, p.event)) return { ok: false, error: `prompt ${approval_id} is not shown to '${from.name}'` };
    const offered = p.event.available_decisions.find((d) => reviewDecisionKind(d) === reviewDecisionKind(decision) && sameNetworkAction(d, decision));
    if (!offered)
      return {
        ok: false,
        error: `'${reviewDecisionKind(decision)}' is not offered for ${approval_id} (offered: ${p.event.available_decisions.map(reviewDecisionKind).join(', ')})`,
      };
    // An amendment answer always appends the proposed rule, never a prefix the approver typed.
    this.finish(approval_id, { approval_id, decision: offered, approver, ...(from?.kind ? { kind: from.kind } : {}) });
    return { ok: true };
  }

  /** Deny everything pending (daemon stopping). */
  shutdown(): void {
    for (const id of [...this.pending.keys()]) this.finish(id, { approval_id: id, decision: 'abort', approver: 'daemon', auto: 'shutdown' }, 'daemon stopping');
  }

  private finish(approval_id: string, outcome: ApprovalOutcome, note?: string): void {
    const p = this.pending.get(approval_id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(approval_id);
    this.answered.set(approval_id, outcome.approver);
    if (this.answered.size > 10_000) this.answered.delete(this.answered.keys().next().value as string);
    const ev: ResolvedEvent = { approval_id, decision: outcome.decision, approver: outcome.approver, ...(note ? { note } : {}) };
    for (const a of this.approvers) safe(() => a.resolved(ev));
    p.resolve(outcome);
  }
}

/** A network amendment answer names its action (allow or deny): it takes only an offered one of the same
 * action. Every other decision kind matches by kind alone. */
function sameNetworkAction(offered: ReviewDecision, answer: ReviewDecision): boolean {
  const action = (d: ReviewDecision): string | undefined =>
    typeof d === 'object' && 'network_policy_amendment' in d ? d.network_policy_amendment.network_policy_amendment.action : undefined;
  return action(offered) === action(answer);
}

/** One misbehaving approver (a closed socket) must not break the others. */
function safe(f: () => void): void {
  try {
    f();
  } catch {
    /* the approver's own transport reports its failure */
  }
}
