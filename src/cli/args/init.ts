/** `gate init [--force]`: declaration (the command: src/cli/commands/init.ts). Pure. */
import { type CommandSpec, flag } from './spec.js';

export const init: CommandSpec = {
  command: 'init',
  describe: 'write a commented config.toml and an empty default rules file',
  usage: 'usage: gate init [--force]',
  epilogue:
    'Writes $GATE_HOME/config.toml (every key, commented out, with its default and what it does) and ' +
    '$CODEX_HOME/rules/default.rules (a header; the file rules and amendments are appended to). An existing file is ' +
    'not replaced: nothing is written and the exit status is 1, unless --force.',
  builder: (y) => y.option('force', flag('replace files that exist')),
  run: async (a, ctx) => ((await ctx.load('init')) as typeof import('../commands/init.js')).run({ force: a.force === true }),
};
