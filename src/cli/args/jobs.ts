/** `gate jobs [--json]` and `gate jobs kill <pid|all>`: declaration (the command: src/cli/commands/jobs.ts). Pure. */
import { type CommandSpec, flag } from './spec.js';

type Jobs = typeof import('../commands/jobs.js');

export const jobs: CommandSpec = {
  command: 'jobs',
  describe: "background jobs in this session's sandboxes; 'gate jobs kill <pid|all>' ends them",
  usage: "usage: gate jobs [--json]          what runs in this session's sandboxes\n       gate jobs kill <pid|all>   end one (its pid as listed) or all of them",
  builder: (y) => y.option('json', flag('as JSON')),
  subcommands: [
    {
      command: 'kill <target>',
      describe: 'end one process (its pid as listed) or all of them',
      usage: 'usage: gate jobs kill <pid|all> [--json]',
      epilogue: 'Exit status 1 when no process with that pid runs in the session sandboxes.',
      builder: (y) =>
        y
          .positional('target', { type: 'string', describe: "a pid as 'gate jobs' lists it, or all" })
          .check((a) => {
            if (a.target === 'all' || /^[1-9]\d*$/.test(String(a.target))) return true;
            throw new Error(`'${String(a.target)}' is neither a pid nor all`);
          }),
      run: async (a, ctx) => ((await ctx.load('jobs')) as Jobs).kill({ target: String(a.target), json: a.json === true }),
    },
  ],
  run: async (a, ctx) => ((await ctx.load('jobs')) as Jobs).list({ json: a.json === true }),
};
