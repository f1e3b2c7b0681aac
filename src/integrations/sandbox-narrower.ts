/**
 * `gate mcp`'s report of the sandbox its host asks for (Codex's sandbox state) to the daemon (approval channel
 * `sandbox-narrow`), over a connection of its own that lives as long as this server: `gate status` shows it,
 * the audit log records it, and the daemon forgets it when the connection closes, however `gate mcp` ends.
 * It narrows nothing itself: each call carries the host's sandbox (`gate-sh --sandbox`) and runs in the
 * stricter of it and gate-sh's own; other clients of the daemon keep gate-sh's own. This says, in the log,
 * what that stricter one is. Trust: the approval channel is the user's (never reachable from a sandbox).
 */
import { ApprovalClient } from '../client/index.js';
import type { GatePaths } from '../paths/index.js';
import { samePolicy, type SandboxPolicy } from '../sandbox/index.js';

export interface SandboxNarrowerOptions {
  paths: GatePaths;
  /** who narrows, as `gate status` shows it */
  by: string;
  /** start the daemon when none answers */
  ensureDaemon(): Promise<void>;
  log(line: string): void;
}

export class SandboxNarrower {
  private client?: ApprovalClient;
  /** what the daemon holds for this connection (undefined: nothing sent on it yet) */
  private sent?: SandboxPolicy;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: SandboxNarrowerOptions) {}

  /** The host asks for `asked` (`why`: in whose words); resolves once the daemon knows. One at a time. */
  narrow(asked: SandboxPolicy, why: string): Promise<void> {
    const next = this.queue.then(() => this.send(asked, why));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async send(asked: SandboxPolicy, why: string): Promise<void> {
    if (this.client && this.sent && samePolicy(this.sent, asked)) return;
    const c = this.client ?? (await this.connect());
    const r = await c.call('sandbox-narrow', { policy: asked, by: this.o.by, why });
    this.sent = asked;
    if (samePolicy(r.effective, asked)) this.o.log(`sandbox policy of the host's calls ${JSON.stringify(asked)}, as the host asked`);
    else
      this.o.log(
        `the host asked for the sandbox ${JSON.stringify(asked)}; gate-sh's own, ${JSON.stringify(r.own)}, does not allow all of it: ` +
          `its calls run in the stricter, ${JSON.stringify(r.effective)} (gate status shows it; change gate-sh's own with 'gate config set sandbox_mode ...')`,
      );
  }

  private async connect(): Promise<ApprovalClient> {
    let c: ApprovalClient;
    try {
      c = await ApprovalClient.connect(this.o.paths);
    } catch {
      await this.o.ensureDaemon();
      c = await ApprovalClient.connect(this.o.paths);
    }
    // a daemon that went away took the narrowing with it: the next call sends it again
    c.onClose = () => {
      if (this.client === c) {
        this.client = undefined;
        this.sent = undefined;
      }
    };
    this.client = c;
    return c;
  }

  /** Withdraw the narrowing (the connection closes). */
  close(): void {
    this.client?.close();
    this.client = undefined;
    this.sent = undefined;
  }
}
