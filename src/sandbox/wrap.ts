/**
 * One command line for each EscalationExecution: what the escalation runner and gate-sh spawn.
 *   Unsandboxed            → the command as is
 *   TurnDefault            → the turn's SandboxPolicy around it (or as is under danger-full-access)
 *   Permissions(profile)   → exactly the profile
 * Pure; `bwrap` is the resolved bubblewrap path (see findBwrap in src/exec/sandbox-run.ts).
 */
import type { EscalationExecution } from '../protocol/index.js';
import type { SandboxPolicy } from './policy.js';
import { permissionProfileArgv, turnSandboxArgv, type SandboxContext } from './bwrap-argv.js';

/**
 * A command line: what the escalation runner spawns, and the part of a run's plan (src/exec/plan.ts RunPlan)
 * that each step rewrites: the sandbox step (src/exec/sandbox-step.ts), the exec gate (src/exec/exec-gate.ts),
 * joining a session sandbox (session-join.ts). One type for all of them (docs/glossary.md, "plan").
 */
export interface CommandLine {
  program: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** true when bubblewrap wraps the command */
  sandboxed?: boolean;
  /** the gate's guard for a run without a sandbox (src/sandbox/gate-state.ts), mounted by the exec gate's launcher */
  guard?: string;
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
