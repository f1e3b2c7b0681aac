/** `gate mcp`: declaration (the command: src/cli/commands/mcp.ts). Pure. */
import type { CommandSpec } from './spec.js';

export const mcp: CommandSpec = {
  command: 'mcp',
  describe: 'MCP server on stdio with a gated shell tool',
  usage: 'usage: gate mcp',
  epilogue:
    'An MCP server on stdio with one tool, "shell" {command, workdir, timeout_ms?, login?}, that runs every command through ' +
    'gate-sh. Approvals become elicitations when the client supports them (unless approval_policy rejects mcp_elicitations). ' +
    'Honours codex/sandbox-state/update.',
  run: async (_a, ctx) => ((await ctx.load('mcp')) as typeof import('../commands/mcp.js')).run(),
};
