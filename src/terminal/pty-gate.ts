/**
 * Pre-flight for one line of the interactive shell, exactly as `gate-sh -c LINE` asks it: one `preflight`
 * request over the request channel; any Deny means the line is not sent to bash.
 */
import { RequestClient, RequestError } from '../transport/index.js';
import type { GatePaths } from '../paths/index.js';
import { displayCommand, displayScript, visibleText } from '../text/index.js';
import type { PreflightReply, SubcommandReply } from '../protocol/index.js';

export type LineDecision = { ok: true; reply: PreflightReply } | { ok: false; messages: string[] };

const display = (argv: string[]): string => displayCommand(argv, 400);

/** The `gate-sh: denied: ...` lines for a denied reply (one per denied subcommand). */
export function denialMessages(reply: PreflightReply, line: string): string[] {
  const denied = (reply.subcommands ?? []).filter((s: SubcommandReply) => s.action?.type === 'Deny');
  const out = denied.map((s) => `gate-sh: denied: ${display(s.argv)}: ${visibleText((s.action as { reason: string }).reason)}`);
  if (out.length === 0) out.push(`gate-sh: denied: ${displayScript(line, 80)}: ${visibleText((reply.action as { reason: string }).reason)}`);
  return out;
}

export class LineGate {
  private client: RequestClient | undefined;

  /** `settings`: the caller's GATE_SANDBOX_MODE / GATE_APPROVAL_POLICY, which the daemon applies or refuses */
  constructor(
    private readonly paths: GatePaths,
    private readonly settings?: Record<string, string>,
  ) {}

  /** `sessionRun`: the run the session's long-lived bash was started under (its execs carry that id) */
  async check(line: string, cwd: string, login: boolean, sessionRun?: string): Promise<LineDecision> {
    const req = {
      type: 'preflight',
      shell: 'bash',
      flag: login ? '-lc' : '-c',
      script: line,
      cwd,
      pid: process.pid,
      sandbox_permissions: 'use_default',
      ...(sessionRun ? { session_run: sessionRun } : {}),
      ...(this.settings ? { settings: this.settings } : {}),
    };
    try {
      this.client ??= RequestClient.open(this.paths);
      // resend every second with the same id (idempotent); a pending approval keeps the wait alive
      const reply = await this.client.request<PreflightReply>(req, { timeoutMs: 1000, retries: 9, onPending: () => undefined });
      if (reply.type !== 'preflight' || !reply.action || typeof reply.run_id !== 'string')
        return { ok: false, messages: [`gate-sh: protocol error: unexpected reply '${String(reply.type)}' to preflight; nothing ran. Check 'gate status'`] };
      if (reply.action.type === 'Deny') return { ok: false, messages: denialMessages(reply, line) };
      return { ok: true, reply };
    } catch (e) {
      this.client?.close();
      this.client = undefined;
      const msg = e instanceof RequestError ? e.message : (e as Error).message;
      return { ok: false, messages: [`gate-sh: ${msg}; nothing ran`] };
    }
  }

  finished(runId: string, status: number, durationMs: number): void {
    this.client?.notify({ type: 'run-finished', run_id: runId, exit_status: status, duration_ms: Math.round(durationMs) });
  }

  close(): void {
    this.client?.close();
  }
}
