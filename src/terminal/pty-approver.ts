/**
 * The interactive session's inline approver: attached to the daemon's approval channel, it shows this
 * session's prompts on the user's real terminal and takes a one-key answer from that terminal only.
 * Commands in the session hold just the PTY, so nothing they print or type can answer (they cannot reach
 * gate-sh's own stdin); the approval channel stays out of every sandbox (docs/interactive.md).
 */
import { ApprovalClient, decisionForKey, renderPrompt, VIEW_KEY, wholeCommand } from '../client/index.js';
import type { ApprovalEvent, PromptEvent } from '../protocol/index.js';
import type { GatePaths } from '../paths/index.js';

export interface InlineApproverHooks {
  /** is this prompt ours to show? (this session's runs, or our pre-flight in flight) */
  mine(p: PromptEvent): boolean;
  /** a prompt needs the terminal: the session pauses its output and routes keys here */
  show(text: string): void;
  /** the prompt is gone (answered here or elsewhere, or expired) */
  hide(text: string): void;
}

export class InlineApprover {
  private queue: PromptEvent[] = [];
  private current: PromptEvent | undefined;

  private constructor(
    private readonly client: ApprovalClient,
    private readonly hooks: InlineApproverHooks,
  ) {
    client.onEvent = (l) => this.onEvent(l);
  }

  static async attach(paths: GatePaths, hooks: InlineApproverHooks): Promise<InlineApprover> {
    const client = await ApprovalClient.connect(paths);
    await client.call('attach', { name: `gate-sh interactive (pid ${process.pid})` });
    return new InlineApprover(client, hooks);
  }

  /** true while a prompt waits for a key */
  get active(): boolean {
    return this.current !== undefined;
  }

  /** Keys from the real terminal while active: the first offered answer wins, other keys ring the bell. */
  key(data: Buffer): void {
    for (const ch of data.toString('latin1')) {
      const p = this.current;
      if (!p) return;
      if (ch === VIEW_KEY) {
        this.hooks.show(`\r\n${wholeCommand(p).replace(/\n/g, '\r\n')}\r\n${renderPrompt(p).replace(/\n/g, '\r\n')}\r\n   answer: `);
        continue;
      }
      // Ctrl-C on a prompt refuses: abort if offered, else deny
      const decision = ch === '\x03' ? (decisionForKey(p, 'x') ?? decisionForKey(p, 'd')) : decisionForKey(p, ch);
      if (!decision) {
        this.hooks.show('\x07');
        continue;
      }
      this.client.call('answer', { approval_id: p.approval_id, decision }).catch(() => undefined);
      this.dismiss(p.approval_id);
    }
  }

  close(): void {
    this.client.close();
  }

  private onEvent(l: ApprovalEvent): void {
    if (l.type === 'prompt') {
      const p: PromptEvent = l;
      if (!this.hooks.mine(p)) return;
      this.queue.push(p);
      this.next();
    } else if (l.type === 'resolved' && typeof l.approval_id === 'string') this.dismiss(l.approval_id);
  }

  private next(): void {
    if (this.current || this.queue.length === 0) return;
    this.current = this.queue.shift();
    this.hooks.show(`\r\n${renderPrompt(this.current!).replace(/\n/g, '\r\n')}\r\n   answer: `);
  }

  private dismiss(id: string): void {
    this.queue = this.queue.filter((q) => q.approval_id !== id);
    if (this.current?.approval_id !== id) return;
    this.current = undefined;
    this.hooks.hide('\r\n');
    this.next();
  }
}
