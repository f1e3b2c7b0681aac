/**
 * `gate hook claude-code|gemini`: declaration, for its help and completion. bin/gate runs the hook itself,
 * from its bundle and without yargs (an agent starts it before every shell command; every failure of it is
 * exit 2, which both agents read as a denial): src/cli/commands/hook.ts. Pure.
 */
import type { CommandSpec } from './spec.js';

export const hook: CommandSpec = {
  command: 'hook <agent>',
  describe: "answer an agent's permission hook (claude-code, gemini) from gate-sh's rules",
  usage: 'usage: gate hook claude-code|gemini',
  epilogue:
    "Answers an agent's permission hook for its shell tool: the command is rewritten to run through gate-sh (its rules,\n" +
    "sandbox, exec gate and audit): JSON on stdin, JSON on stdout. Installed by 'gate setup <agent> --route hook'.",
  builder: (y) => y.positional('agent', { type: 'string', choices: ['claude-code', 'gemini'], describe: 'the agent whose hook this answers' }),
  run: async (a, ctx) => ((await ctx.load('hook')) as typeof import('../commands/hook.js')).run([String(a.agent)]),
};
