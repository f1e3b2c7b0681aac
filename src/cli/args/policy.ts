/**
 * `gate policy check|files|amend`: declaration (the command: src/cli/commands/policy.ts). `check` keeps its
 * own parser, Codex's (`codex execpolicy check`, clap): everything after the first word of the command belongs
 * to the command, and a flag given twice is an error; src/cli/gate.ts runs it without yargs (its start-up is
 * measured against `node -e 0`). What is declared here for it is its help and completion. Pure.
 */
import { type CommandSpec, flag, list, PARSER_TRAILING, prefixWords, str, trailing } from './spec.js';

type Policy = typeof import('../commands/policy.js');

export const policy: CommandSpec = {
  command: 'policy',
  describe: 'check commands against rule files (Codex-compatible JSON)',
  usage: 'usage: gate policy <check|files|amend> [options]',
  subcommands: [
    {
      command: 'check [command..]',
      describe: 'check a command against execpolicy rule files; prints what `codex execpolicy check` prints',
      usage: 'usage: gate policy check [--rules PATH]... [--pretty] [--resolve-host-executables] [--hardened] [--] COMMAND...',
      epilogue: 'Without --rules: the rule folders gate-sh loads ($GATE_HOME/rules, $CODEX_HOME/rules, $CODEX_HOME/policy).',
      builder: (y) =>
        y
          .positional('command', { type: 'string', describe: 'the command to check (its words)' })
          .option('rules', list('rule file to load (repeatable); default: the rule folders gate-sh uses', { alias: 'r' }))
          .option('pretty', flag('pretty-print the JSON'))
          .option('resolve-host-executables', flag('resolve absolute program paths against basename rules (host_executable)'))
          .option('hardened', flag('also report basename prompt/forbidden rules for any path spelling')),
      // reached only when gate.ts did not take it (it always does, but for --help): the same parser
      run: async (_a, ctx) => ((await ctx.load('policy')) as Policy).check(ctx.argv.slice(ctx.argv.indexOf('check') + 1)),
    },
    {
      command: 'files',
      describe: 'list the rule files gate-sh loads, in order, and validate them (exit 1 with the location if broken)',
      usage: 'usage: gate policy files [--rules PATH]...',
      builder: (y) => y.option('rules', list('an extra rule file (repeatable)', { alias: 'r' })),
      run: async (a, ctx) => ((await ctx.load('policy')) as Policy).files({ rules: (a.rules as string[] | undefined) ?? [] }),
    },
    {
      command: 'amend [command..]',
      describe: 'append prefix_rule(pattern=[COMMAND...], decision="allow") to the default rules file',
      usage: 'usage: gate policy amend [--file PATH] [--] COMMAND...',
      epilogue:
        'Appends to $CODEX_HOME/rules/default.rules (or --file) under a lock, unless the rule is there already. For ' +
        "forbidden or prompt rules: 'gate rules add'.",
      builder: (y) =>
        y
          // `gate policy amend git log --oneline`: an option gate does not know is a word of the prefix
          .parserConfiguration(PARSER_TRAILING)
          .positional('command', { type: 'string', describe: 'the command prefix to allow (its words)' })
          .option('file', str('the rules file to append to'))
          .check((a) => {
            if (prefixWords(a as never, 'command').length === 0) throw new Error('name the command prefix to allow');
            return true;
          }),
      run: async (a, ctx) => ((await ctx.load('policy')) as Policy).amend({ file: a.file as string | undefined, prefix: trailing(a, 'command') }),
    },
  ],
};
