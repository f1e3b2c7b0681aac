/**
 * Scripted fake model servers on loopback, one per agent API: Anthropic Messages (Claude Code), OpenAI
 * Responses (Codex) and Gemini generateContent (gemini-cli), each streaming as the real API does. The
 * conversation is scripted: the n-th request of the main loop that already carries n tool results gets the
 * n-th scripted shell command as a tool call; once every command was answered, a final text. Every tool
 * result the agent sent back is recorded, so a test sees exactly what reached "the model".
 * Test code only; it trusts nothing it receives (the agents' requests are parsed defensively).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Api = 'anthropic' | 'openai' | 'gemini';

export interface ToolResult {
  /** the scripted command this result answers */
  command: string;
  /** the text the agent gave the model */
  output: string;
  /** the agent marked it as an error (Anthropic is_error), when the API says so */
  isError?: boolean;
}

export interface FakeModel {
  url: string;
  /** results received, in order */
  results: ToolResult[];
  /** every request's path and parsed body, for diagnosis */
  requests: { path: string; body: any }[];
  /** the tool names the agent offered in its main-loop request */
  tools: string[];
  /** per scripted call k: when the model's call was sent and when the request carrying its result first
   * arrived (performance.now() ms); the agent's wall time for the call is the difference. Other requests
   * (an agent's own side questions to the model) do not count. */
  calls: { sent: number; resultAt?: number }[];
  close(): Promise<void>;
}

export interface FakeModelOptions {
  api: Api;
  /** the shell commands to ask for, one tool call each */
  commands: string[];
  /** final text once all commands were answered */
  finalText?: string;
  /** the folder to run in, for tools that want it named (gate-sh's MCP shell tool: workdir) */
  workdir?: string;
}

export async function startFakeModel(o: FakeModelOptions): Promise<FakeModel> {
  const state: FakeModel = { url: '', results: [], requests: [], tools: [], calls: [], close: async () => {} };
  const handler = o.api === 'anthropic' ? anthropic : o.api === 'openai' ? openai : gemini;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = {};
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        body = { unparsed: Buffer.concat(chunks).toString('utf8').slice(0, 2000) };
      }
      state.requests.push({ path: req.url ?? '', body });
      const received = performance.now();
      const before = state.results.length;
      try {
        handler(req, res, body, o, state);
        // a main-loop request that brought a new result ends that call; one that asks a call starts it
        for (let k = before; k < state.results.length; k++) if (state.calls[k] && state.calls[k].resultAt === undefined) state.calls[k].resultAt = received;
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(e) } }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

/** What the n-th main-loop turn answers: the next command, or the final text. */
function next(o: FakeModelOptions, answered: number, st: FakeModel): { command: string } | { text: string } {
  if (answered >= o.commands.length) return { text: o.finalText ?? 'done' };
  st.calls[answered] ??= { sent: performance.now() }; // a retried turn keeps the first sending
  return { command: o.commands[answered] };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === 'string' ? c : typeof c?.text === 'string' ? c.text : '')).join('');
  return '';
}

function sse(res: ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

// ---- Anthropic Messages --------------------------------------------------------------------------------

function anthropic(req: IncomingMessage, res: ServerResponse, body: any, o: FakeModelOptions, st: FakeModel): void {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'POST' || !path.endsWith('/messages')) {
    if (path.endsWith('/count_tokens')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":10}');
    return void res
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"type":"error","error":{"type":"not_found_error","message":"fake model: not here"}}');
  }
  const tools: string[] = Array.isArray(body.tools) ? body.tools.map((t: any) => String(t?.name)) : [];
  const main = tools.includes('Bash');
  let reply: { command: string } | { text: string } = { text: 'ok' };
  if (main) {
    st.tools = tools;
    const results: { output: string; isError: boolean }[] = [];
    for (const m of Array.isArray(body.messages) ? body.messages : [])
      if (m?.role === 'user' && Array.isArray(m.content))
        for (const c of m.content) if (c?.type === 'tool_result') results.push({ output: textOf(c.content), isError: c.is_error === true });
    st.results = results.map((r, i) => ({ command: o.commands[i] ?? '', ...r }));
    reply = next(o, results.length, st);
  }
  const id = `msg_${st.requests.length}`;
  const content =
    'command' in reply
      ? { type: 'tool_use', id: `toolu_${st.requests.length}`, name: 'Bash', input: { command: reply.command, description: 'scripted command' } }
      : { type: 'text', text: reply.text };
  const stop = 'command' in reply ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = {
    id,
    type: 'message',
    role: 'assistant',
    model: String(body.model ?? 'fake'),
    content: [] as unknown[],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  if (!body.stream)
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...message, content: [content], stop_reason: stop }));
  const start = content.type === 'tool_use' ? { ...content, input: {} } : { type: 'text', text: '' };
  const delta =
    content.type === 'tool_use'
      ? { type: 'input_json_delta', partial_json: JSON.stringify((content as { input: unknown }).input) }
      : { type: 'text_delta', text: (content as { text: string }).text };
  sse(res, [
    { event: 'message_start', data: { type: 'message_start', message } },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: start } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}

// ---- OpenAI Responses ----------------------------------------------------------------------------------

function openai(req: IncomingMessage, res: ServerResponse, body: any, o: FakeModelOptions, st: FakeModel): void {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'GET' && path.endsWith('/models'))
    return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[],"models":[]}');
  if (req.method !== 'POST' || !path.endsWith('/responses'))
    return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"fake model: not here"}}');
  const tools: string[] = Array.isArray(body.tools) ? body.tools.map((t: any) => String(t?.name ?? t?.type)) : [];
  st.tools = tools;
  // an MCP server's tools come as a namespace (Codex: mcp__<server>); gate-sh's is mcp__gate / shell
  const mcp = Array.isArray(body.tools) && body.tools.some((t: any) => t?.type === 'namespace' && t.name === 'mcp__gate');
  const tool = mcp ? 'shell' : tools.includes('shell_command') ? 'shell_command' : tools.includes('exec_command') ? 'exec_command' : 'shell';
  const results: { output: string }[] = [];
  for (const item of Array.isArray(body.input) ? body.input : [])
    if (item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output') results.push({ output: outputText(item.output) });
  st.results = results.map((r, i) => ({ command: o.commands[i] ?? '', ...r }));
  const reply = next(o, results.length, st);
  const rid = `resp_${st.requests.length}`;
  const item =
    'command' in reply
      ? {
          type: 'function_call',
          id: `fc_${st.requests.length}`,
          call_id: `call_${st.requests.length}`,
          name: tool,
          ...(mcp ? { namespace: 'mcp__gate' } : {}),
          arguments: JSON.stringify(
            mcp
              ? { command: reply.command, workdir: o.workdir ?? '/' }
              : tool === 'shell'
                ? { command: ['bash', '-lc', reply.command] }
                : tool === 'exec_command'
                  ? { cmd: reply.command }
                  : { command: reply.command },
          ),
        }
      : { type: 'message', id: `m_${st.requests.length}`, role: 'assistant', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(res, [
    { event: 'response.created', data: { type: 'response.created', response: { id: rid } } },
    { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
    { event: 'response.completed', data: { type: 'response.completed', response: { id: rid, usage } } },
  ]);
}

function outputText(out: unknown): string {
  if (typeof out === 'string') {
    try {
      const j = JSON.parse(out);
      if (j && typeof j.output === 'string') return j.output;
    } catch {
      // plain text output
    }
    return out;
  }
  if (out && typeof out === 'object' && typeof (out as { content?: unknown }).content === 'string') return (out as { content: string }).content;
  return textOf(out);
}

// ---- Gemini --------------------------------------------------------------------------------------------

function gemini(req: IncomingMessage, res: ServerResponse, body: any, o: FakeModelOptions, st: FakeModel): void {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'POST')
    return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":404,"message":"fake model: not here"}}');
  if (path.endsWith(':countTokens')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":10}');
  const decls: string[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : [])
    for (const f of Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []) decls.push(String(f?.name));
  const main = decls.includes('run_shell_command');
  let reply: { command: string } | { text: string } = { text: '{"next_speaker":"user","reasoning":"done"}' };
  if (main) {
    st.tools = decls;
    const results: { output: string }[] = [];
    for (const c of Array.isArray(body.contents) ? body.contents : [])
      for (const p of Array.isArray(c?.parts) ? c.parts : [])
        if (p?.functionResponse) {
          const r = p.functionResponse.response;
          results.push({ output: typeof r?.output === 'string' ? r.output : typeof r?.error === 'string' ? r.error : JSON.stringify(r) });
        }
    st.results = results.map((r, i) => ({ command: o.commands[i] ?? '', ...r }));
    reply = next(o, results.length, st);
  }
  const part =
    'command' in reply
      ? { functionCall: { name: 'run_shell_command', args: { command: reply.command, description: 'scripted command' } } }
      : { text: reply.text };
  const chunk = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
  };
  if (path.includes(':streamGenerateContent')) return sse(res, [{ data: chunk }]);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chunk));
}
