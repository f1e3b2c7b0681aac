/** From an approval outcome to the Action the client gets, and the overall pre-flight Action. Pure. */
import { type Action, deny } from '../protocol/index.js';
import { displayCommand } from '../text/index.js';
import type { ApprovalOutcome } from './approvals.js';

/**
 * The Action for an outcome; `approved` is what an approval turns the command into. `why` is the prompt's
 * own reason (a rule's justification, the code-loading variables it names): a headless denial says it too.
 */
export function outcomeAction(o: ApprovalOutcome, approved: Action, cmd: string, timeoutMs: number, why?: string): Action {
  switch (o.auto) {
    case 'no-approver':
      return deny(`approval needed for '${cmd}' but no approver is attached (run 'gate approve')${why ? `: ${why}` : ''}`);
    case 'timeout':
      return deny(`approval for '${cmd}' timed out after ${seconds(timeoutMs)} s`);
    case 'shutdown':
      return deny('the gate daemon stopped before the approval was answered');
    case 'cancelled':
      return deny('not run: another subcommand of the script was denied');
  }
  // an MCP client answers an elicitation as it likes: `codex exec` declines every one without asking
  // anybody, so its "no" is never worded as a person's
  if ((o.decision === 'denied' || o.decision === 'abort') && o.kind === 'mcp-elicitation')
    return deny(
      `approval needed for '${cmd}'; the MCP client (${o.approver}) ${o.decision === 'denied' ? 'declined' : 'cancelled'} it, which a client may do without asking anybody (codex exec declines every request)${why ? `: ${why}` : ''}`,
    );
  if (o.decision === 'denied') return deny('User denied execution');
  if (o.decision === 'abort') return deny('User cancelled execution');
  return approved;
}

/** Overall pre-flight Action: any Deny wins; a shared Escalate stays; otherwise Run (per-exec escalation is the exec gate's). */
export function overall(actions: Action[]): Action {
  const denied = actions.find((a) => a.type === 'Deny');
  if (denied) return denied;
  const first = actions[0];
  if (first && first.type === 'Escalate' && actions.every((a) => JSON.stringify(a) === JSON.stringify(first))) return first;
  return { type: 'Run' };
}

/**
 * A command for messages: shown as every approval surface shows it (src/text/display.ts), at most 200
 * characters: a 1 MiB script must not become a 1 MiB reason; its head and tail stay, with its length.
 */
export function shortCommand(argv: string[]): string {
  return displayCommand(argv, 200);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0);
}
