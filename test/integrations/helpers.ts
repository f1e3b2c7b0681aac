/** MCP clients (the SDK's own Client over real stdio spawning `gate mcp`) and JSON-RPC host drivers. Test-only. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { GATE } from '../helpers/env.js';
import { waitFor } from '../helpers/daemon.js';

export interface McpSession {
  client: Client;
  /** every elicitation the server sent, in order */
  elicitations: ElicitRequest['params'][];
  /** answer the next elicitation with this (default: decline) */
  answers: ElicitResult[];
  /** wait this long before answering (a human reading the prompt) */
  answerDelayMs: number;
  stderr(): string;
  shell(args: {
    command: string;
    workdir: string;
    timeout_ms?: number;
    login?: boolean;
    sandbox_permissions?: string;
    justification?: string;
    additional_permissions?: unknown;
  }, meta?: Record<string, unknown>): Promise<{ exit_code: number; output: string; timed_out: boolean; duration: { secs: number; nanos: number } }>;
  close(): Promise<void>;
}

export async function mcpSession(env: Record<string, string>, opts: { elicitation: boolean }): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [GATE, 'mcp'], env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => (err += d));
  const client = new Client({ name: 'gate-sh-test', version: '1.0.0' }, { capabilities: opts.elicitation ? { elicitation: {} } : {} });
  const elicitations: ElicitRequest['params'][] = [];
  const answers: ElicitResult[] = [];
  const delay = { ms: 0 };
  if (opts.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicitations.push(req.params);
      if (delay.ms) await new Promise((r) => setTimeout(r, delay.ms));
      return answers.shift() ?? { action: 'decline' };
    });
  await client.connect(transport);
  return {
    client,
    elicitations,
    answers,
    get answerDelayMs() {
      return delay.ms;
    },
    set answerDelayMs(ms: number) {
      delay.ms = ms;
    },
    stderr: () => err,
    async shell(args, meta) {
      const r = await client.callTool({ name: 'shell', arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, { timeout: 60_000 });
      const content = r.content as { type: string; text: string }[];
      if (r.isError) throw new Error(content[0]?.text ?? 'tool error');
      return JSON.parse(content[0].text);
    },
    close: () => client.close(),
  };
}

/** A real `gate host` process (or a host-socket connection) driven line by line as a JSON-RPC host would. */
export interface RpcDriver {
  /** every message received, in order */
  received: Record<string, any>[];
  send(o: Record<string, unknown>): void;
  call(method: string, params?: unknown): Promise<Record<string, any>>;
  /** the next unseen message matching */
  next(pred: (m: Record<string, any>) => boolean, what: string): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export function rpcDriver(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, close: () => Promise<void>, stderr = () => ''): RpcDriver {
  const received: Record<string, any>[] = [];
  const used = new Set<number>();
  createInterface({ input }).on('line', (l) => received.push(JSON.parse(l)));
  let seq = 1000;
  const d: RpcDriver = {
    received,
    send: (o) => void output.write(JSON.stringify(o) + '\n'),
    async call(method, params) {
      const id = ++seq;
      d.send({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
      return d.next((m) => m.id === id && !m.method, `the reply to ${method}`);
    },
    next: (pred, what) =>
      waitFor(() => {
        for (let i = 0; i < received.length; i++)
          if (!used.has(i) && pred(received[i])) {
            used.add(i);
            return received[i];
          }
        return undefined;
      }, `${what} (stderr: ${stderr()})`, 30_000),
    close,
  };
  return d;
}

export function hostProcess(env: Record<string, string>, args: string[] = []): RpcDriver & { child: ChildProcess } {
  const child = spawn(process.execPath, [GATE, 'host', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (x) => (err += x));
  const d = rpcDriver(child.stdout!, child.stdin!, async () => {
    child.stdin!.end();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  }, () => err);
  return Object.assign(d, { child });
}
