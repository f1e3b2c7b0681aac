/**
 * `gate mcp`: MCP server on stdio with a gated `shell` tool (src/integrations/mcp-server.ts). Logs go to
 * stderr; stdout carries only MCP messages.
 */
export async function run(): Promise<number> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { serveMcp } = await import('../../integrations/mcp-server.js');
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await serveMcp(transport, { env: process.env }, ended);
  // Nothing left to serve: leave even if a socket or timer would keep the event loop alive.
  process.exit(0);
}
