/**
 * The approval channel's server: `approval.sock`, a Unix stream socket speaking JSON lines, in a folder that
 * is never mounted into sandboxes. The messages are typed in src/protocol/approval.ts; every request line is
 * untrusted JSON, checked here. Requests (`{op, re?}`; `re` is echoed so a client can match answers):
 *   attach {name, kind?, descendants_of?}
 *                                 → attached; then prompt / resolved events as they happen. `kind`
 *                                   (console, host, mcp-elicitation) lets the session filter approvers
 *                                   (reject.mcp_elicitations); `descendants_of: pid` shows only prompts of
 *                                   runs whose outermost gate-sh descends from that pid (an MCP server's own)
 *   answer {approval_id, decision} → answer {ok, error?}   (first answer wins)
 *   status                        → status {status}
 *   config-get                    → config {config}
 *   config-set {key, value}       → config {config} | error {message}
 *   jobs                          → jobs {jobs}: every process of the session sandboxes (session-sandbox.ts)
 *   jobs-kill {target: pid|'all'} → jobs-kill {killed}
 *   stop {force?}                 → stopping | error {message} naming the active runs and jobs (no force)
 *   reload                        → reloaded {files, error}
 *   sandbox-narrow {policy|null, by?, why?}
 *                                 → sandbox {own, effective}: a host's own sandbox for its calls, shown by
 *                                   `gate status` while this connection is open (daemon.ts hostSandbox)
 */
import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { configView } from '../config/index.js';
import { parseSandboxPolicy } from '../sandbox/index.js';
import { visibleText } from '../text/index.js';
import { checkSocketPath } from '../paths/index.js';
import type { Approver } from './approver.js';
import { APPROVAL_OPS, type ApprovalLine, parseApproverKind, parseReviewDecision, type PromptEvent, type ResolvedEvent } from '../protocol/index.js';
import { isDescendant } from './proc-tree.js';
import type { Daemon } from './daemon.js';

const MAX_LINE = 1 << 20;

export class ApprovalServer {
  private server?: Server;
  private readonly conns = new Set<Socket>();
  private errorLoggedAt = 0;
  private connections = 0;

  constructor(
    private readonly path: string,
    private readonly daemon: Daemon<unknown>,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    checkSocketPath(this.path);
    try {
      unlinkSync(this.path); // stale: the caller holds the session lock
    } catch {
      /* none */
    }
    const server = createServer((c) => this.onConnection(c));
    const old = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.path, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } finally {
      process.umask(old);
    }
    // A connection the kernel gave but the daemon could not take (EMFILE: at its descriptor limit) is the
    // server's 'error' event; with no listener it ended the daemon. That connection is lost; the server goes on.
    server.on('error', (e) => {
      if (Date.now() - this.errorLoggedAt < 10_000) return;
      this.errorLoggedAt = Date.now();
      this.log(`approval.sock: ${e.message} (a connection lost; logged once per 10 s)`);
    });
    chmodSync(this.path, 0o600);
    this.server = server;
  }

  close(): void {
    for (const c of this.conns) c.destroy();
    this.server?.close();
    try {
      unlinkSync(this.path);
    } catch {
      /* gone */
    }
  }

  private onConnection(c: Socket): void {
    this.conns.add(c);
    let buf = '';
    let detach: (() => void) | undefined;
    let approver: Approver | undefined;
    let name = 'console';
    // this connection's narrowing of the sandbox (sandbox-narrow), withdrawn when it closes
    const narrowKey = `conn-${++this.connections}`;
    let narrowed = false;
    const send = (o: ApprovalLine): void => {
      if (c.writable) c.write(JSON.stringify(o) + '\n');
    };
    c.setEncoding('utf8');
    c.on('error', () => c.destroy());
    c.on('close', () => {
      this.conns.delete(c);
      if (detach) this.log(`approver '${name}' detached`);
      detach?.();
      if (narrowed) this.daemon.hostSandbox(narrowKey, null);
    });
    c.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_LINE && !buf.includes('\n')) {
        send({ type: 'error', message: `line over ${MAX_LINE} bytes` });
        c.destroy();
        return;
      }
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        let req: Record<string, unknown>;
        try {
          req = JSON.parse(line) as Record<string, unknown>;
          if (!req || typeof req !== 'object' || Array.isArray(req)) throw new Error('not an object');
        } catch {
          send({ type: 'error', message: 'each line must be one JSON object' });
          continue;
        }
        const re = req.re;
        const reply = (o: ApprovalLine): void => send(re === undefined ? o : ({ ...o, re } as ApprovalLine));
        try {
          if (req.op === 'attach') {
            if (detach) throw new Error('already attached');
            name = typeof req.name === 'string' && req.name ? req.name.slice(0, 64) : `console-${c.remotePort ?? this.conns.size}`;
            const kind = parseApproverKind(req.kind);
            const root = req.descendants_of;
            if (root !== undefined && (!Number.isInteger(root) || (root as number) <= 1)) throw new Error('"descendants_of" must be a process id');
            approver = {
              name,
              kind,
              ...(root !== undefined ? { accepts: (p: PromptEvent) => p.client_pid !== undefined && isDescendant(p.client_pid, root as number) } : {}),
              prompt: (p: PromptEvent) => send({ type: 'prompt', ...p }),
              resolved: (r: ResolvedEvent) => send({ type: 'resolved', ...r }),
            };
            reply({ type: 'attached', name, kind });
            detach = this.daemon.broker.attach(approver);
            this.log(`approver '${name}' attached`);
          } else if (req.op === 'answer' || (req.op === undefined && typeof req.approval_id === 'string')) {
            const id = String(req.approval_id ?? '');
            const r = this.daemon.broker.answer(id, parseReviewDecision(req.decision), name, approver);
            reply({ type: 'answer', approval_id: id, ...r });
          } else if (req.op === 'status') reply({ type: 'status', status: this.daemon.status() });
          else if (req.op === 'jobs') reply({ type: 'jobs', jobs: this.daemon.sessionJobs() });
          else if (req.op === 'jobs-kill') {
            const t = req.target;
            if (t === 'all' || (typeof t === 'number' && Number.isInteger(t) && t > 0)) reply({ type: 'jobs-kill', killed: this.daemon.killJobs(t) });
            else reply({ type: 'error', message: "jobs-kill: target must be a pid or 'all'" });
          } else if (req.op === 'config-get') reply({ type: 'config', config: configView(this.daemon.config) });
          else if (req.op === 'config-set') {
            if (typeof req.key !== 'string' || typeof req.value !== 'string') throw new Error('config-set needs string "key" and "value"');
            reply({ type: 'config', config: configView(this.daemon.setConfig(req.key, req.value, name)) });
          } else if (req.op === 'stop') {
            const force = req.force === true;
            const busy = this.daemon.activeWork();
            if (busy && !force) throw new Error(`${busy}; stop them first, or 'gate daemon stop --force' (each run's gate-sh then says why it ended)`);
            reply({ type: 'stopping' });
            this.log(`stop requested on the approval channel${busy ? ` (--force: ${busy})` : ''}`);
            if (busy) this.daemon.noteForcedStop(`the gate daemon was stopped ('gate daemon stop --force' by ${name}) while this ran; the run was ended`);
            setImmediate(() => this.daemon.stop());
          } else if (req.op === 'reload') {
            const error = this.daemon.reloadPolicy(name);
            reply({ type: 'reloaded', files: [...this.daemon.policyFiles()], error: error ?? null });
          } else if (req.op === 'sandbox-narrow') {
            const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? visibleText(v.slice(0, 300)) : undefined);
            const policy = req.policy === null ? null : parseSandboxPolicy(req.policy);
            const r = this.daemon.hostSandbox(narrowKey, policy && { policy, by: text(req.by) ?? name, why: text(req.why) });
            narrowed = policy !== null;
            reply({ type: 'sandbox', ...r });
          } else throw new Error(`unknown op ${JSON.stringify(req.op)} (${APPROVAL_OPS.join(', ')})`);
        } catch (e) {
          reply({ type: 'error', message: e instanceof Error ? e.message : String(e) });
        }
      }
    });
  }
}
