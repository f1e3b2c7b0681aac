/** `gate reload`: declaration (the command: src/cli/commands/reload.ts). Pure. */
import type { CommandSpec } from './spec.js';

export const reload: CommandSpec = {
  command: 'reload',
  describe: 'reload the rule files now (and check config.toml); a broken file is named',
  usage: 'usage: gate reload',
  epilogue: 'Reloads the rule files now and checks config.toml (config.toml changes take effect with gate daemon restart).',
  run: async (_a, ctx) => ((await ctx.load('reload')) as typeof import('../commands/reload.js')).run(),
};
