/** `gate status`'s human view of the daemon's status object (pure, client side): the object is the approval channel's status reply. */
import type { SessionSandboxStatus as SessionStatus } from '../protocol/index.js';
import { fit, visibleText } from '../text/index.js';

/** Session sandboxes and what runs in them (src/daemon/session-sandbox.ts; `gate jobs` has the details). */
function sessionLines(s: SessionStatus | undefined): string[] {
  if (!s) return [];
  return [
    `session sandboxes: ${s.unavailable ? `unavailable (${s.unavailable}): each command gets a sandbox of its own` : s.sandboxes.length || 'none'}`,
    ...s.sandboxes.map((b) => `  ${b.key}  holder pid ${b.holder_pid}, network ${b.network}, mounts ${b.mounts}, ${b.jobs} process(es)`),
    ...s.jobs.map(
      (j) => `    pid ${j.pid} (${j.pid_in_sandbox} inside) ${j.outlived_command ? 'job' : 'command'}  ${j.argv.join(' ').slice(0, 100)}  (cwd ${j.cwd})`,
    ),
  ];
}

function installLine(i: unknown): string {
  const o = (i ?? {}) as { root?: string; version?: string };
  return o.root ? `gate-sh ${o.version ?? '?'} at ${o.root}` : '? (a daemon older than this gate)';
}

interface Narrowed {
  own: unknown;
  by: { policy: unknown; by: string; why?: string; since: string }[];
}

/** Hosts with a sandbox of their own for their calls (Codex's own setting, through gate mcp). */
function narrowedLines(n: Narrowed | undefined): string[] {
  if (!n) return [];
  return [
    `  narrowed for their own calls (each runs in the stricter of this and its host's) by:`,
    ...n.by.map((x) => visibleText(`    ${x.by}${x.why ? ` (${x.why})` : ''}: ${JSON.stringify(x.policy)}, since ${x.since}`)),
  ];
}

/** Human form of the daemon's status object. */
export function formatStatus(s: Record<string, unknown>): string {
  const policy = (s.policy ?? {}) as { files?: string[]; last_reload_error?: { message: string; at: string } | null; loaded_at?: string };
  const pending = (s.pending ?? []) as { approval_id: string; display: string; cwd: string }[];
  const approvers = (s.approvers ?? []) as string[];
  const sp = s.sandbox_policy as { type: string } | undefined;
  const lines = [
    `gate daemon: running (pid ${s.pid}, session '${s.session}', since ${s.started_at})`,
    `install:         ${installLine(s.install)}`,
    `decider:         ${s.decider}`,
    `approval policy: ${s.approval_policy}`,
    `sandbox policy:  ${sp ? JSON.stringify(sp) : '?'}`,
    ...narrowedLines(s.sandbox_narrowed as Narrowed | undefined),
    `rule files:      ${policy.files?.length ? '' : '(none)'}`,
    ...(policy.files ?? []).map((f) => `  ${f}`),
    `policy loaded:   ${policy.loaded_at}`,
    `reload error:    ${policy.last_reload_error ? `${policy.last_reload_error.message} (at ${policy.last_reload_error.at}; runs are refused until it is fixed)` : 'none'}`,
    `approvers:       ${approvers.length ? approvers.join(', ') : "none (prompts are denied at once; run 'gate approve')"}`,
    `pending prompts: ${pending.length || 'none'}`,
    ...pending.map((p) => visibleText(`  ${p.approval_id}  ${fit(p.display, 200)}  (cwd ${p.cwd})`)),
    `audit log:       ${(s.paths as { audit_log?: string } | undefined)?.audit_log ?? '?'}`,
    ...sessionLines(s.session_sandboxes as SessionStatus | undefined),
  ];
  return lines.join('\n') + '\n';
}
