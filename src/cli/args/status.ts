/** `gate status [--json]`: declaration (the command: src/cli/commands/status.ts). Pure. */
import { type CommandSpec, flag } from './spec.js';

export const status: CommandSpec = {
  command: 'status',
  describe: 'the daemon: policy files, approval and sandbox policy, approvers, pending prompts',
  usage: 'usage: gate status [--json]',
  epilogue: 'Exit status 3 when no daemon answers for this session (GATE_SESSION).',
  builder: (y) => y.option('json', flag('one JSON object')),
  run: async (a, ctx) => ((await ctx.load('status')) as typeof import('../commands/status.js')).run({ json: a.json === true }),
};
