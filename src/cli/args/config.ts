/** `gate config get [KEY] [--json]` and `gate config set KEY VALUE`: declaration (the command:
 * src/cli/commands/config.ts). Pure. */
import { SETTABLE_KEYS } from '../../config/index.js';
import { type CommandSpec, flag } from './spec.js';

type Config = typeof import('../commands/config.js');

export const config: CommandSpec = {
  command: 'config',
  describe: 'show or change the session configuration at run time',
  usage: 'usage: gate config get [KEY] [--json] | gate config set KEY VALUE',
  epilogue: `settable keys: ${SETTABLE_KEYS.join(', ')}`,
  subcommands: [
    {
      command: 'get [key]',
      describe: "the whole configuration as config.toml spells it (TOML, or JSON with --json), or one key's value",
      usage: 'usage: gate config get [KEY] [--json]',
      epilogue:
        "One KEY: its value alone (a string bare, anything else as JSON). Without a daemon: what 'gate daemon start' would use.",
      builder: (y) => y.positional('key', { type: 'string', describe: 'one key' }).option('json', flag('as JSON')),
      run: async (a, ctx) => ((await ctx.load('config')) as Config).get({ key: a.key as string | undefined, json: a.json === true }),
    },
    {
      command: 'set <key> <value>',
      describe: "change the running daemon's configuration until it stops (config.toml keeps it for good)",
      usage: 'usage: gate config set KEY VALUE',
      epilogue: `settable keys: ${SETTABLE_KEYS.join(', ')}`,
      builder: (y) =>
        y
          .positional('key', { type: 'string', choices: [...SETTABLE_KEYS], describe: 'the key' })
          .positional('value', { type: 'string', describe: 'its value (JSON for a table)' })
          .option('json', flag('show the new value as JSON')),
      run: async (a, ctx) => ((await ctx.load('config')) as Config).set({ key: String(a.key), value: String(a.value), json: a.json === true }),
    },
  ],
};
