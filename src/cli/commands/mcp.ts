/**
 * `gate mcp`: MCP server on stdio with a gated `shell` tool (src/integrations/mcp-server.ts). Logs go to
 * stderr; stdout carries only MCP messages.
 */
import { parseArgs } from 'node:util';

const USAGE = `usage: gate mcp
  An MCP server on stdio with one tool, "shell" {command, workdir, timeout_ms?, login?}, that runs every
  command through gate-sh. Approvals become elicitations when the client supports them (unless
  approval_policy rejects mcp_elicitations). Honours codex/sandbox-state/update.
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { serveMcp } = await import('../../integrations/mcp-server.js');
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await serveMcp(transport, { env: process.env }, ended);
  // Nothing left to serve: leave even if a socket or timer would keep the event loop alive.
  process.exit(0);
}
