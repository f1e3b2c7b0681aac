/** `gate doctor [--json]`: declaration (the command: src/cli/commands/doctor.ts). Pure. */
import { type CommandSpec, flag } from './spec.js';

export const doctor: CommandSpec = {
  command: 'doctor',
  describe: 'per agent on this machine: is gate-sh wired in, would the agent really use it',
  usage: 'usage: gate doctor [--json]',
  epilogue: 'Exit status 1 when an agent that was set up (or names gate-sh) would not use it.',
  builder: (y) => y.option('json', flag('the reports as JSON')),
  run: async (a, ctx) => ((await ctx.load('doctor')) as typeof import('../commands/doctor.js')).run({ json: a.json === true }),
};
