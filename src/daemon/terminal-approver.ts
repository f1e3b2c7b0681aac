/**
 * The foreground daemon's own terminal as an approver: prompts are printed, the oldest open one is
 * answered with a single key (a/s/p/d/x). Only used when stdin is a TTY.
 */
import { emitKeypressEvents } from 'node:readline';
import type { Approver } from './approver.js';
import { type PromptEvent, type ResolvedEvent, reviewDecisionKind } from '../protocol/index.js';
import type { ApprovalBroker } from './approvals.js';
import { decisionForKey, promptCommand, renderPrompt, VIEW_KEY, wholeCommand } from '../client/index.js';
import { visibleText } from '../text/index.js';

export function terminalApprover(
  broker: ApprovalBroker,
  input: NodeJS.ReadStream = process.stdin,
  out: NodeJS.WritableStream = process.stderr,
): Approver & { close(): void } {
  const open: PromptEvent[] = [];
  const onKey = (str: string | undefined, key: { ctrl?: boolean; name?: string }): void => {
    if (key?.ctrl && key.name === 'c') {
      process.kill(process.pid, 'SIGINT');
      return;
    }
    const p = open[0];
    if (!p || !str) return;
    if (str === VIEW_KEY) {
      out.write(`${wholeCommand(p)}\n${renderPrompt(p)}\n`);
      return;
    }
    const d = decisionForKey(p, str);
    if (!d) {
      out.write(`   (key '${str}' is not offered for this prompt)\n`);
      return;
    }
    const r = broker.answer(p.approval_id, d, 'terminal');
    if (!r.ok) out.write(`   ${r.error}\n`);
  };
  emitKeypressEvents(input);
  if (input.isTTY) input.setRawMode(true);
  input.on('keypress', onKey);
  input.resume();
  return {
    name: 'terminal',
    prompt(p) {
      open.push(p);
      out.write(renderPrompt(p) + '\n');
    },
    resolved(r: ResolvedEvent) {
      const i = open.findIndex((p) => p.approval_id === r.approval_id);
      if (i >= 0) open.splice(i, 1);
      out.write(visibleText(`   ${r.approval_id}: ${reviewDecisionKind(r.decision)} by ${r.approver}${r.note ? ` (${r.note})` : ''}`) + '\n');
      if (open[0]) out.write(`   next: ${promptCommand(open[0])}\n`);
    },
    close() {
      input.off('keypress', onKey);
      if (input.isTTY) input.setRawMode(false);
      input.pause();
    },
  };
}
