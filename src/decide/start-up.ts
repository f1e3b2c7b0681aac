/**
 * The start-up phase (docs/startup-phase.md): what the login profile and rc files run before a script's first command
 * is the machine's, not the agent's. Such an exec is decided by `forbidden` rules only (no heuristic, no
 * prompt) and runs in the turn sandbox. Pure: the daemon decides *whether* a run is in its start-up phase
 * (src/daemon/start-up.ts); this file only says what an exec in that phase gets.
 */
import { type Decision, type MatchOptions, type Policy, strictest } from '../rules/index.js';
import type { DecidedBy } from './types.js';
import { toSource } from './command.js';
import { type Action, deny, escalate, RUN } from '../protocol/index.js';
import { FORBIDDEN_BY_POLICY, joinProgram } from './intercepted.js';

export interface StartUpExecInput {
  program: string;
  argv: readonly string[];
  /** the program's real path when it is a symlink (its rules apply too) */
  realProgram?: string;
  /** bash itself runs in the turn sandbox: Run in place; else the exec is sent into the turn sandbox */
  sandboxed: boolean;
}

export interface StartUpExecDecision {
  command: string[];
  decision: Decision;
  decided_by: DecidedBy;
  action: Action;
}

/** Rules only: a forbidden rule (also on the symlink's target) denies; everything else runs sandboxed. */
export function decideStartUpExec(policy: Policy, i: StartUpExecInput, options: MatchOptions): StartUpExecDecision {
  const command = joinProgram(i.program, i.argv);
  const commands = i.realProgram && i.realProgram !== i.program ? [command, joinProgram(i.realProgram, i.argv)] : [command];
  let forbidden: DecidedBy | undefined;
  for (const c of commands) {
    const matches = policy.matchesForCommand(c, options, () => 'allow');
    if (strictest(matches.map((m) => m.decision)) === 'forbidden') {
      const m = matches.find((x) => x.decision === 'forbidden')!;
      forbidden = toSource(m, undefined);
      break;
    }
  }
  if (forbidden) return { command, decision: 'forbidden', decided_by: forbidden, action: deny(FORBIDDEN_BY_POLICY) };
  const by: DecidedBy = { type: 'heuristic', decision: 'allow', name: 'start-up', command };
  return { command, decision: 'allow', decided_by: by, action: i.sandboxed ? RUN : escalate({ type: 'TurnDefault' }) };
}
