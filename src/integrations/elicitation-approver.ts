/**
 * The MCP server's seat on the daemon's approval channel: attached as an `mcp-elicitation` approver that is
 * shown only prompts of runs descending from this process (the `shell` calls it runs itself or through a
 * spawned gate-sh, and their nested runs). Each prompt becomes one elicitation; its answer goes back as a ReviewDecision. A
 * prompt answered elsewhere first (another approver, the timeout) withdraws the elicitation. While a run's
 * prompt is open its timeout clock is paused.
 */
import { ApprovalClient } from '../client/index.js';
import type { ApprovalEvent, PromptEvent } from '../protocol/index.js';
import type { GatePaths } from '../paths/index.js';
import { decisionForElicitation, elicitationFor, type ElicitationAnswer, type ElicitationParams } from './elicitation.js';

export interface ElicitationApproverOptions {
  paths: GatePaths;
  /** ask the MCP client; rejects when the client fails or the signal aborts */
  elicit(params: ElicitationParams, signal: AbortSignal): Promise<ElicitationAnswer>;
  /** a prompt of one of this process's runs opened (true) or closed (false) */
  onPromptOpen?(prompt: Pick<PromptEvent, 'approval_id' | 'run_id' | 'client_pid'>, open: boolean): void;
  log(line: string): void;
}

export class ElicitationApprover {
  private client?: ApprovalClient;
  private connecting?: Promise<void>;
  private readonly open = new Map<string, { abort: AbortController; prompt: PromptEvent }>();

  constructor(private readonly opts: ElicitationApproverOptions) {}

  get attached(): boolean {
    return this.client !== undefined;
  }

  /** Attach unless attached (the daemon may have restarted since). */
  ensure(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.attach().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  close(): void {
    for (const o of this.open.values()) o.abort.abort();
    this.client?.close();
    this.client = undefined;
  }

  private async attach(): Promise<void> {
    const c = await ApprovalClient.connect(this.opts.paths);
    c.onEvent = (e) => this.onEvent(c, e);
    c.onClose = () => {
      if (this.client === c) this.client = undefined;
      for (const [id, o] of this.open) this.closeElicitation(id, o);
    };
    await c.call('attach', { name: `mcp-${process.pid}`, kind: 'mcp-elicitation', descendants_of: process.pid });
    this.client = c;
  }

  private onEvent(c: ApprovalClient, e: ApprovalEvent): void {
    if (e.type === 'prompt') void this.ask(c, e);
    else if (e.type === 'resolved') {
      const o = this.open.get(String(e.approval_id));
      if (o) this.closeElicitation(String(e.approval_id), o);
    }
  }

  private closeElicitation(id: string, o: { abort: AbortController; prompt: PromptEvent }): void {
    if (!this.open.delete(id)) return;
    o.abort.abort();
    this.opts.onPromptOpen?.(o.prompt, false);
  }

  private async ask(c: ApprovalClient, p: PromptEvent): Promise<void> {
    if (this.open.has(p.approval_id)) return;
    const o = { abort: new AbortController(), prompt: p };
    this.open.set(p.approval_id, o);
    this.opts.onPromptOpen?.(p, true);
    let answer: ElicitationAnswer;
    try {
      answer = await this.opts.elicit(elicitationFor(p), o.abort.signal);
    } catch (e) {
      if (o.abort.signal.aborted) return; // answered elsewhere
      // The client could not ask: fail closed now rather than at the approval timeout.
      this.opts.log(`elicitation for ${p.approval_id} failed, answering abort: ${(e as Error).message}`);
      answer = { action: 'cancel' };
    }
    const decision = decisionForElicitation(p, answer);
    try {
      const r = await c.call('answer', { approval_id: p.approval_id, decision });
      if (!r.ok) this.opts.log(`answer for ${p.approval_id} not taken: ${String(r.error)}`);
    } catch (e) {
      this.opts.log(`answer for ${p.approval_id} failed: ${(e as Error).message}`);
    }
  }
}
