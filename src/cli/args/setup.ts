/** `gate setup <agent> [--route R]...` and `gate setup --undo <agent>`: declaration (the command:
 * src/cli/commands/setup.ts, which knows the agents). Pure. */
import { type CommandSpec, flag, list } from './spec.js';

export const setup: CommandSpec = {
  command: 'setup <agent>',
  describe: 'wire gate-sh into an agent (claude-code, codex, gemini; shell: any other); --undo reverses it',
  usage:
    'usage: gate setup <agent> [--route shell|hook|mcp]...   wire gate-sh into an agent\n' +
    '       gate setup --undo <agent>                           reverse it exactly\n' +
    '       gate setup shell                                    what any other agent needs',
  epilogue: `agents and routes (default first):
  claude-code  shell: $GATE_HOME/bin/bash (gate-sh named bash) as env.CLAUDE_CODE_SHELL in ~/.claude/settings.json
               hook:  a PreToolUse hook for Bash running 'gate hook claude-code'
  gemini       hook:  a BeforeTool hook for run_shell_command in ~/.gemini/settings.json running 'gate hook gemini'
               shell: $GATE_HOME/bin/bash; start gemini with that folder first on PATH
  codex        mcp:   [mcp_servers.gate] (gate mcp) in ~/.codex/config.toml, its built-in shell tool off

Changes are recorded in $GATE_HOME/setup/ (with a copy of each file as it was). Check with 'gate doctor'.`,
  builder: (y) =>
    y
      .positional('agent', { type: 'string', describe: 'claude-code, gemini, codex, or shell' })
      .option('undo', flag('reverse what gate setup did for this agent'))
      .option('route', list('the route(s) to wire (repeatable)', { choices: ['shell', 'hook', 'mcp'] })),
  run: async (a, ctx) =>
    ((await ctx.load('setup')) as typeof import('../commands/setup.js')).run({
      agent: String(a.agent),
      undo: a.undo === true,
      route: a.route as string[] | undefined,
    }),
};
