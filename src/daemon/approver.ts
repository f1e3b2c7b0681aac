/**
 * Approver: anything that can answer prompts — the daemon's own terminal, a `gate approve` console on the
 * approval socket, and later MCP elicitation, a JSON-RPC host or a risk assessor. The broker notifies every
 * attached approver; each answers through ApprovalBroker.answer(). Nothing here is reachable from the
 * request channel. The events are the approval channel's (src/protocol/approval.ts). Types only.
 */
import type { ApproverKind, PromptEvent, ResolvedEvent } from '../protocol/index.js';

export interface Approver {
  readonly name: string;
  readonly kind?: ApproverKind;
  /** only these prompts are shown to (and may be answered by) this approver; default: every prompt */
  accepts?(p: PromptEvent): boolean;
  prompt(p: PromptEvent): void;
  resolved(r: ResolvedEvent): void;
}
