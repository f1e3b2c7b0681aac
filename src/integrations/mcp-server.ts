/**
 * `gate mcp`: an MCP server (stdio) with Codex's shell-tool interface. The `shell` tool runs
 * `gate-sh -c|-lc <command>` in `workdir` through the full gate (in this process, from the daemon's run
 * plan: src/integrations/shell-run.ts) and returns Codex's ExecResult as JSON text.
 * Prompts of its own runs become elicitations when the client declared elicitation support (unless
 * `reject.mcp_elicitations`); otherwise they go to the other approvers. The sandbox the host asks for — per
 * call in `_meta` (Codex 0.169 and later: `codex/sandbox-state`), or by `codex/sandbox-state/update` (request or
 * notification, for the calls that carry none) — narrows that call's sandbox (`gate-sh --sandbox`): it runs
 * in the stricter of the host's and gate-sh's own; a host asking for read-only gets it, one asking for more
 * (danger-full-access, wider roots) never widens gate-sh's own; other clients of the same daemon keep
 * gate-sh's own. The log and `gate status` say what the host asked and what its calls get
 * (sandbox-narrower.ts). A sandbox gate-sh cannot apply as asked refuses the call (sandbox-state.ts). Calls run with the user's
 * environment as the host had it, not the host's short one for MCP servers (mcp-env.ts); the log says what
 * was added and dropped; a daemon this server starts gets that environment too.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ensureDaemon } from '../client/index.js';
import { gatePaths } from '../paths/index.js';
import { ElicitationApprover } from './elicitation-approver.js';
import type { ElicitationAnswer } from './elicitation.js';
import {
  SANDBOX_STATE_CAPABILITY,
  SANDBOX_STATE_META_CAPABILITY,
  SANDBOX_STATE_METHOD,
  SANDBOX_STATE_VERSION,
  sandboxPolicyFromState,
  sandboxStateOfCall,
  SandboxStateError,
} from './sandbox-state.js';
import { SandboxNarrower } from './sandbox-narrower.js';
import { callEnvironment, describeCallEnvironment, hostEnvironment } from './mcp-env.js';
import { startShell, ShellParamsError, type RunningShell, type ShellParams } from './shell-run.js';
import type { SandboxPolicy } from '../sandbox/index.js';

export interface McpServerOptions {
  env: NodeJS.ProcessEnv;
  /** the host's environment (mcp-env.ts: read from the parent process when not given; null: none) */
  hostEnv?: { env?: Record<string, string>; source: string } | null;
  /** a gate-sh launcher to spawn per call (default: none; calls run in this process, from the daemon's plan) */
  gateSh?: string;
  log?: (line: string) => void;
}

export interface GateMcp {
  server: McpServer;
  close(): Promise<void>;
}

const INSTRUCTIONS =
  'This server provides a tool to execute shell commands and return their output. Every command goes through gate-sh: rules, approvals and the sandbox decide what runs.';

export function createGateMcp(opts: McpServerOptions): GateMcp {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`gate mcp: ${l}\n`));
  // the calls get the user's environment as the host had it, not the host's short one for MCP servers
  const host = opts.hostEnv === undefined ? hostEnvironment(process.ppid) : opts.hostEnv;
  const calls = host ? callEnvironment(opts.env, host.env, host.source) : undefined;
  if (calls) log(describeCallEnvironment(calls));
  const callEnv: NodeJS.ProcessEnv = calls?.env ?? opts.env;
  const paths = gatePaths(opts.env);
  // a daemon started from here gets the user's environment too, as one started by their own gate-sh would:
  // it is what the code-loading check trusts (the user's EDITOR, NODE_OPTIONS, ... are not the sandbox's)
  const startDaemon = (): Promise<void> => ensureDaemon(callEnv);
  const experimental = {
    [SANDBOX_STATE_CAPABILITY]: { version: SANDBOX_STATE_VERSION },
    [SANDBOX_STATE_META_CAPABILITY]: { version: SANDBOX_STATE_VERSION },
  };
  const server = new McpServer({ name: 'gate-sh', version: '0.1.0' }, { capabilities: { tools: {}, experimental }, instructions: INSTRUCTIONS });
  const narrower = new SandboxNarrower({ paths, by: `gate mcp (pid ${process.pid})`, ensureDaemon: startDaemon, log });
  /** the sandbox of the calls that carry none in their `_meta` (the host's last `codex/sandbox-state/update`) */
  let hostSandbox: SandboxPolicy | undefined;
  /** the host's sandbox state → the policy its call asks for (InvalidParams: one gate-sh cannot apply);
   * reported to the daemon for `gate status` and the log */
  const applySandboxState = async (state: unknown): Promise<SandboxPolicy> => {
    let asked: SandboxPolicy;
    try {
      asked = sandboxPolicyFromState(state);
    } catch (e) {
      if (e instanceof SandboxStateError) throw new McpError(ErrorCode.InvalidParams, `gate-sh: cannot apply the sandbox the host asks for: ${e.message}; nothing ran`);
      throw e;
    }
    const host = server.server.getClientVersion()?.name ?? 'the MCP client';
    // (the call carries its sandbox itself: a report that cannot reach the daemon only leaves status without it)
    await narrower.narrow(asked, `${host} asked for its sandbox: ${asked.type}`).catch((e: Error) => log(`sandbox state not reported: ${e.message}`));
    return asked;
  };
  const running = new Set<RunningShell>();
  /** the calls each open prompt paused: its own call, or (a nested run that names no call) every call
   * of this process that could own it */
  const paused = new Map<string, RunningShell[]>();
  const approver = new ElicitationApprover({
    paths,
    elicit: async (params, signal): Promise<ElicitationAnswer> => {
      const r = await server.server.elicitInput({ mode: 'form', ...params }, { signal, timeout: 24 * 3600_000 });
      return { action: r.action, content: r.content as Record<string, unknown> | undefined };
    },
    onPromptOpen: (prompt, open) => {
      if (!open) {
        for (const s of paused.get(prompt.approval_id) ?? []) s.resume();
        paused.delete(prompt.approval_id);
        return;
      }
      const all = [...running];
      const exact = all.filter((s) => s.owns(prompt) === 'exact');
      const owners = exact.length ? exact : all.filter((s) => s.owns(prompt) === 'maybe');
      for (const s of owners) s.pause();
      paused.set(prompt.approval_id, owners);
    },
    log,
  });
  const elicits = (): boolean => server.server.getClientCapabilities()?.elicitation?.form !== undefined;

  /** Our approver is attached when the client can be asked (starting the daemon as gate-sh would). Once
   * attached, nothing to do per call: gate-sh itself reports a daemon that went away. */
  const ready = async (): Promise<void> => {
    if (!elicits() || approver.attached) return;
    await startDaemon();
    await approver.ensure();
  };

  server.registerTool(
    'shell',
    {
      description: 'Runs a shell command and returns its output. You MUST provide the workdir as an absolute path.',
      inputSchema: {
        command: z.string().describe('The bash string to execute.'),
        workdir: z.string().describe('The working directory to execute the command in. Must be an absolute path.'),
        timeout_ms: z.number().int().min(0).optional().describe('The timeout for the command in milliseconds.'),
        login: z.boolean().optional().describe('Launch Bash with -lc instead of -c: defaults to true.'),
        sandbox_permissions: z
          .enum(['use_default', 'require_escalated', 'with_additional_permissions'])
          .optional()
          .describe(
            'use_default (the turn sandbox), require_escalated (ask to run outside it) or with_additional_permissions (ask for exactly additional_permissions). A person decides.',
          ),
        additional_permissions: z
          .object({
            network: z.boolean().optional(),
            file_system: z
              .object({ read: z.array(z.string()).optional(), write: z.array(z.string()).optional() })
              .strict()
              .optional(),
          })
          .strict()
          .optional()
          .describe('With with_additional_permissions: the permissions asked for; relative paths are against workdir.'),
        justification: z.string().optional().describe('Why the command needs what sandbox_permissions asks for; shown in the approval prompt.'),
      },
    },
    async (params: ShellParams, extra: { signal: AbortSignal; _meta?: unknown }) => {
      // the host's sandbox for this call is in force before anything of it runs (Codex sends it with each call)
      const state = sandboxStateOfCall(extra._meta);
      const sandbox = state !== undefined ? await applySandboxState(state) : hostSandbox;
      try {
        await ready();
      } catch (e) {
        // gate-sh itself reports an unreachable daemon and runs nothing; keep going so the reason reaches the agent.
        log(`approval channel: ${(e as Error).message}`);
      }
      let shell: RunningShell;
      try {
        shell = startShell(params, { env: callEnv, gateSh: opts.gateSh, autostart: startDaemon, sandbox });
      } catch (e) {
        if (e instanceof ShellParamsError) throw new McpError(ErrorCode.InvalidParams, e.message);
        throw e;
      }
      running.add(shell);
      // the client cancelled the call (notifications/cancelled): stop the run
      const cancel = (): void => shell.kill();
      extra.signal.addEventListener('abort', cancel, { once: true });
      try {
        const result = await shell.result;
        return { content: [{ type: 'text' as const, text: JSON.stringify(result) }] };
      } finally {
        extra.signal.removeEventListener('abort', cancel);
        running.delete(shell);
      }
    },
  );

  const stateSchema = z.object({ method: z.literal(SANDBOX_STATE_METHOD), params: z.unknown().optional() });
  server.server.setRequestHandler(stateSchema, async (req) => {
    hostSandbox = await applySandboxState(req.params);
    return {};
  });
  // (a notification has no answer: one gate-sh cannot apply leaves the last one in force, and is logged)
  server.server.setNotificationHandler(stateSchema, async (n) => {
    await applySandboxState(n.params).then(
      (p) => void (hostSandbox = p),
      (e: Error) => log(`sandbox state notification not applied: ${e.message}`),
    );
  });

  return {
    server,
    async close() {
      for (const s of running.values()) s.kill();
      approver.close();
      narrower.close();
      await server.close();
    },
  };
}

/** Serve on a transport until it closes or `until` resolves (stdin ended); then stop running calls. */
export async function serveMcp(transport: Transport, opts: McpServerOptions, until?: Promise<void>): Promise<void> {
  const gate = createGateMcp(opts);
  const closed = new Promise<void>((resolve) => (gate.server.server.onclose = resolve));
  await gate.server.connect(transport);
  await Promise.race(until ? [closed, until] : [closed]);
  await gate.close();
}
