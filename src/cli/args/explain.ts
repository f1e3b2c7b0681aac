/** `gate explain`: declaration (the command: src/cli/commands/explain.ts). Pure. */
import { type CommandSpec, flag, list, oneOf, str, trailing } from './spec.js';

export const explain: CommandSpec = {
  command: 'explain [words..]',
  describe: 'why a script gets its decisions',
  usage:
    "usage: gate explain [options] -- <shell> -c|-lc '<script>'\n" +
    "       gate explain [options] '<script>'          (a bare script: as bash -lc)\n" +
    '       gate explain [options] -- <program> [args...]',
  epilogue:
    "Defaults are the running daemon's settings (as 'gate status' shows them), else the session configuration " +
    '($GATE_HOME/config.toml, then GATE_* variables) a daemon would start with; the flags override them. With a ' +
    'daemon running, GATE_SANDBOX_MODE / GATE_APPROVAL_POLICY other than its own are refused, as gate-sh refuses them. ' +
    'Nothing runs.',
  builder: (y) =>
    y
      .positional('words', { type: 'string', describe: 'a script, or (after --) a command' })
      .option('rules', list("extra rule file (repeatable), after the default rule folders and config 'rules'", { alias: 'r' }))
      .option('no-default-rules', flag('only the --rules files'))
      .option('approval-policy', str('untrusted | on-failure | on-request | never'))
      .option('sandbox', str('read-only | workspace-write | danger-full-access | external-sandbox'))
      .option('sandbox-permissions', oneOf('the escalation asked for', ['use_default', 'require_escalated', 'with_additional_permissions']))
      .option('prefix-rule', str('a requested prefix rule, e.g. \'["cargo","install"]\''))
      .option('git-read-only', flag('treat read-only git commands as known safe (historic Codex rules)'))
      .option('json', flag('one JSON object (stable; see docs/explain.md)'))
      .check((a) => {
        if (trailing(a as never, 'words').length === 0) throw new Error('nothing to explain: give a script, or -- and a command');
        return true;
      }),
  run: async (a, ctx) =>
    ((await ctx.load('explain')) as typeof import('../commands/explain.js')).run({
      words: trailing(a, 'words'),
      rules: (a.rules as string[] | undefined) ?? [],
      noDefaultRules: a['no-default-rules'] === true,
      approvalPolicy: a['approval-policy'] as string | undefined,
      sandbox: a.sandbox as string | undefined,
      sandboxPermissions: a['sandbox-permissions'] as string | undefined,
      prefixRule: a['prefix-rule'] as string | undefined,
      gitReadOnly: a['git-read-only'] === true,
      json: a.json === true,
    }),
};
