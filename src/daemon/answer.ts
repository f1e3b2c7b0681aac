/** From an approval outcome to the Action the client gets, and the overall pre-flight answer. Pure. */
import { deny, type Action } from '../protocol/action.js';
import { shlexJoin } from '../rules/index.js';
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
  if (o.decision === 'denied') return deny('User denied execution');
  if (o.decision === 'abort') return deny('User cancelled execution');
  return approved;
}

/** Overall pre-flight answer: any Deny wins; a shared Escalate stays; otherwise Run (per-exec escalation is the exec gate's). */
export function overall(actions: Action[]): Action {
  const denied = actions.find((a) => a.type === 'Deny');
  if (denied) return denied;
  const first = actions[0];
  if (first && first.type === 'Escalate' && actions.every((a) => JSON.stringify(a) === JSON.stringify(first))) return first;
  return { type: 'Run' };
}

/** A command for messages and prompts: shell-quoted; a long one as its head and its tail with its length (a
 * 1 MiB script must not become a 1 MiB reason, and a tail that matters must not be cut away unseen: issue 30;
 * a prompt's `command` has it whole). */
export function shortCommand(argv: string[]): string {
  const s = shlexJoin(argv);
  if (s.length <= 400) return s;
  return `${s.slice(0, 240)} …[${s.length} characters, ${s.length - 400} not shown]… ${s.slice(-160)}`;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0);
}
