/** MCP clients (the SDK's own Client over real stdio spawning `gate mcp`) and rule-file environments. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { GATE, tempEnv, type TempEnv } from '../helpers/env.js';

export function envWithRules(rules: string, extra: Record<string, string> = {}): TempEnv {
  const te = tempEnv(extra);
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(join(te.env.GATE_HOME, 'rules', 'team.rules'), rules);
  return te;
}

export interface McpSession {
  client: Client;
  /** every elicitation the server sent, in order */
  elicitations: ElicitRequest['params'][];
  /** answer the next elicitation with this (default: decline) */
  answers: ElicitResult[];
  stderr(): string;
  shell(args: { command: string; workdir: string; timeout_ms?: number; login?: boolean }): Promise<{ exit_code: number; output: string; timed_out: boolean; duration: { secs: number; nanos: number } }>;
  close(): Promise<void>;
}

export async function mcpSession(env: Record<string, string>, opts: { elicitation: boolean }): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [GATE, 'mcp'], env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => (err += d));
  const client = new Client({ name: 'gate-sh-test', version: '1.0.0' }, { capabilities: opts.elicitation ? { elicitation: {} } : {} });
  const elicitations: ElicitRequest['params'][] = [];
  const answers: ElicitResult[] = [];
  if (opts.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicitations.push(req.params);
      return answers.shift() ?? { action: 'decline' };
    });
  await client.connect(transport);
  return {
    client,
    elicitations,
    answers,
    stderr: () => err,
    async shell(args) {
      const r = await client.callTool({ name: 'shell', arguments: args }, undefined, { timeout: 60_000 });
      const content = r.content as { type: string; text: string }[];
      return JSON.parse(content[0].text);
    },
    close: () => client.close(),
  };
}
