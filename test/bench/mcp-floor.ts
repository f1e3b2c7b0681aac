/**
 * A helper of test/bench/mcp-peer.bench.ts, not a benchmark: the floor of an MCP `shell` call through a
 * gate that has a pre-flight and a kernel layer, with none of gate-sh's work in it. A stdio MCP server with
 * one `shell` tool taking what gate mcp's takes (command, workdir) and answering as it does
 * (`{"exit_code","output"}`). Each call is started as gate mcp starts its plans (the native addon's
 * posix_spawn, stdin /dev/null, output through pipes):
 *  - `node mcp-floor.js FLOOR SOCK`: `FLOOR --call SOCK /bin/bash -lc COMMAND` (programs/notif-floor.c: one
 *    round trip of a pre-flight's size to a responder that does nothing, then bash under a seccomp filter
 *    whose every exec a supervisor answers at once and follows to its end);
 *  - `node mcp-floor.js`: `/bin/bash -lc COMMAND` alone (an MCP server with no gate at all).
 * Not pure: a server. Trust: none (bench only; runs what it is sent).
 */
import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { gateNative } from '../../src/exec/native.js';

const [floor, sock] = process.argv.slice(2);
const native = gateNative();
if (!native.spawn || !native.spawnAvailable()) throw new Error('mcp-floor: the native addon has no spawn here');
const spawnNative = native.spawn.bind(native);

function run(command: string, workdir: string): Promise<{ exit_code: number; output: string }> {
  const [program, args] = floor ? [floor, ['--call', sock, '/bin/bash', '-lc', command]] : ['/bin/bash', ['-lc', command]];
  const [outR, outW] = native.pipe();
  const env = Object.entries(process.env).map(([k, v]) => `${k}=${v}`);
  let ended: (code: number) => void = () => {};
  const exited = new Promise<number>((r) => (ended = r));
  try {
    spawnNative(program, [program, ...args], env, workdir, [-1, outW, outW], (code, signal) => ended(code ?? 128 + signal));
  } finally {
    closeSync(outW);
  }
  const out = new Socket({ fd: outR, readable: true, writable: false });
  const chunks: Buffer[] = [];
  out.on('data', (d: Buffer) => chunks.push(d));
  const closed = new Promise<void>((r) => out.once('close', () => r()));
  return Promise.all([exited, closed]).then(([code]) => ({ exit_code: code, output: Buffer.concat(chunks).toString('utf8') }));
}

const server = new McpServer({ name: floor ? 'mcp-floor' : 'mcp-bare', version: '1' });
server.registerTool(
  'shell',
  { description: 'bash -lc', inputSchema: { command: z.string(), workdir: z.string() } },
  async ({ command, workdir }) => ({ content: [{ type: 'text', text: JSON.stringify(await run(command, workdir)) }] }),
);
await server.connect(new StdioServerTransport());
