/** `gate rules list|add`: declaration (the command: src/cli/commands/rules.ts). Pure. */
import { type CommandSpec, flag, PARSER_TRAILING, prefixWords, str, trailing } from './spec.js';

type Rules = typeof import('../commands/rules.js');

const DECISIONS = ['forbid', 'prompt', 'allow'] as const;
const DECISION = { forbid: 'forbidden', prompt: 'prompt', allow: 'allow' } as const;

export const rules: CommandSpec = {
  command: 'rules',
  describe: 'the prefix rules in force, and adding one without editing a file',
  usage: 'usage: gate rules list [--json]\n       gate rules add --forbid|--prompt|--allow PREFIX... [--justification TEXT] [--file PATH]',
  subcommands: [
    {
      command: 'list',
      describe: 'the prefix rules in force: file:line, decision, pattern, justification',
      usage: 'usage: gate rules list [--json]',
      epilogue: "The running daemon's rule files, or (no daemon) those a daemon would load. 'gate policy files' validates them.",
      builder: (y) => y.option('json', flag('as JSON')),
      run: async (a, ctx) => ((await ctx.load('rules')) as Rules).list({ json: a.json === true }),
    },
    {
      command: 'add [prefix..]',
      describe: 'append a prefix_rule to the default rules file; a running daemon reloads',
      usage: 'usage: gate rules add --forbid|--prompt|--allow [--justification TEXT] [--file PATH] [--] PREFIX...',
      epilogue:
        'Appends prefix_rule(pattern=[PREFIX...], decision=..., justification=...) to $CODEX_HOME/rules/default.rules (or ' +
        '--file) under a lock, unless it is there already; the rule is parsed before it is written. Everything from the ' +
        'first word of PREFIX on is the prefix: gate rules add --forbid git push --force',
      builder: (y) =>
        y
          .parserConfiguration(PARSER_TRAILING)
          .positional('prefix', { type: 'string', describe: 'the command prefix the rule matches (its words)' })
          .option('forbid', flag('decision="forbidden": never runs, however it is spelled'))
          .option('prompt', flag('decision="prompt": a person is asked'))
          .option('allow', flag('decision="allow": runs (outside the sandbox when every part of a script is allowed)'))
          .option('justification', str('why, shown with a denial or prompt'))
          .option('file', str('the rules file to append to'))
          .check((a) => {
            if (prefixWords(a as never, 'prefix').length === 0) throw new Error('name the command prefix the rule matches');
            if (DECISIONS.filter((d) => a[d] === true).length !== 1) throw new Error('give exactly one of --forbid, --prompt, --allow');
            return true;
          }),
      run: async (a, ctx) =>
        ((await ctx.load('rules')) as Rules).add({
          decision: DECISION[DECISIONS.find((d) => a[d] === true) ?? 'forbid'],
          prefix: trailing(a, 'prefix'),
          justification: a.justification as string | undefined,
          file: a.file as string | undefined,
        }),
    },
  ],
};
