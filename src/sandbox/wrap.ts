/**
 * One command line for each EscalationExecution: what the escalation runner and gate-sh spawn.
 *   Unsandboxed            → the command as is
 *   TurnDefault            → the turn's SandboxPolicy around it (or as is under danger-full-access)
 *   Permissions(profile)   → exactly the profile
 * Pure; `bwrap` is the resolved bubblewrap path (see findBwrap in src/exec/sandbox-run.ts).
 */
import type { EscalationExecution } from '../protocol/action.js';
import type { SandboxPolicy } from './policy.js';
import { permissionProfileArgv, turnSandboxArgv, type SandboxContext } from './bwrap-argv.js';

export interface CommandLine {
  program: string;
  args: string[];
  /** true when bubblewrap wraps the command */
  sandboxed: boolean;
}

export function sandboxArgvFor(execution: EscalationExecution, turn: SandboxPolicy, ctx: SandboxContext): string[] | null {
  switch (execution.type) {
    case 'Unsandboxed':
      return null;
    case 'TurnDefault':
      return turnSandboxArgv(turn, ctx);
    case 'Permissions':
      return permissionProfileArgv(execution.profile, ctx);
  }
}

export function wrapCommand(command: readonly string[], bwrapArgs: string[] | null, bwrap: string): CommandLine {
  if (command.length === 0) throw new Error('empty command');
  if (bwrapArgs === null) return { program: command[0], args: command.slice(1), sandboxed: false };
  return { program: bwrap, args: [...bwrapArgs, ...command], sandboxed: true };
}
