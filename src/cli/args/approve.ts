/** `gate approve`: declaration (the command: src/cli/commands/approve.ts). Pure. */
import { type CommandSpec, flag, str } from './spec.js';

/** The answers `--answer ID DECISION` takes (src/protocol/approval.ts, parseReviewDecision). */
const DECISIONS = ['approved', 'approved_for_session', 'approved_execpolicy_amendment', 'network_policy_amendment', 'denied', 'abort'];

export const approve: CommandSpec = {
  command: 'approve [decision]',
  describe: 'approval console: answer pending prompts',
  usage: 'usage: gate approve [--name NAME] [--json] | gate approve --answer APPROVAL_ID DECISION',
  epilogue:
    `decisions: ${DECISIONS.join(', ')}\n` +
    'keys (interactive): a=approved s=approved for session p=approve and save the rule d=denied x=abort, v=view the whole command (when the prompt shows it cut)\n' +
    'Starts the daemon when none runs (not with GATE_NO_AUTOSTART=1), so it can be opened first.',
  builder: (y) =>
    y
      .positional('decision', { type: 'string', choices: DECISIONS, describe: 'with --answer: the answer' })
      .option('json', flag('JSON lines: events out, answers in ({"approval_id": ..., "decision": ...})'))
      .option('answer', str('answer this approval id once (with DECISION) and exit', { requiresArg: true }))
      .option('name', str('the name this console attaches as'))
      .check((a) => {
        if (a.answer !== undefined && a.decision === undefined) throw new Error('--answer needs a DECISION after the approval id');
        if (a.answer === undefined && a.decision !== undefined) throw new Error(`a DECISION ('${String(a.decision)}') is only for --answer APPROVAL_ID`);
        return true;
      }),
  run: async (a, ctx) =>
    ((await ctx.load('approve')) as typeof import('../commands/approve.js')).run({
      json: a.json === true,
      answer: a.answer as string | undefined,
      decision: a.decision as string | undefined,
      name: a.name as string | undefined,
    }),
};
