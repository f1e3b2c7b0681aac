/**
 * A helper of test/bench/mcp-peer.bench.ts, not a benchmark: the floor of an MCP `shell` call through a
 * gate that has a pre-flight and a kernel layer, with none of gate-sh's work in it. A stdio MCP server with
 * one `shell` tool taking what gate mcp's takes (command, workdir) and answering as it does
 * (`{"exit_code","output"}`). Each call is started by gate mcp's own `launch` (src/integrations/shell-plan.ts:
 * the native addon's posix_spawn, stdin /dev/null, output through pipes):
 *  - `node mcp-floor.js FLOOR SOCK`: `FLOOR --call SOCK /bin/bash -lc COMMAND` (programs/notif-floor.c: one
 *    round trip of a pre-flight's size to a responder that does nothing, then bash under a seccomp filter
 *    whose every exec a supervisor answers at once and follows to its end);
 *  - `node mcp-floor.js`: `/bin/bash -lc COMMAND` alone (an MCP server with no gate at all).
 * Not pure: a server. Trust: none (bench only; runs what it is sent).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { launch } from '../../src/integrations/shell-plan.js';

const [floor, sock] = process.argv.slice(2);

/** One call, started by gate mcp's own launch (the addon's posix_spawn where there is one). */
function run(command: string, workdir: string): Promise<{ exit_code: number; output: string }> {
  const [program, args] = floor ? [floor, ['--call', sock, '/bin/bash', '-lc', command]] : ['/bin/bash', ['-lc', command]];
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const child = launch(program, args, env, workdir, []);
  const chunks: Buffer[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => chunks.push(d));
  return child.closed.then((code) => ({ exit_code: code, output: Buffer.concat(chunks).toString('utf8') }));
}

const server = new McpServer({ name: floor ? 'mcp-floor' : 'mcp-bare', version: '1' });
server.registerTool(
  'shell',
  { description: 'bash -lc', inputSchema: { command: z.string(), workdir: z.string() } },
  async ({ command, workdir }) => ({ content: [{ type: 'text', text: JSON.stringify(await run(command, workdir)) }] }),
);
await server.connect(new StdioServerTransport());
