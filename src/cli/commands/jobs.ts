/**
 * `gate jobs [--json]` and `gate jobs kill <pid|all>`: what runs in this session's sandboxes — the
 * background jobs and servers gated commands left running (docs/sandbox.md, "Session sandboxes") — and
 * ending them. Talks to the daemon on the approval channel, which no sandboxed process can reach. Not pure.
 */
import { gatePaths } from '../../paths/index.js';
import { approvalCall } from '../../client/index.js';
import type { SessionJob } from '../../protocol/index.js';
import { displayWord } from '../../text/index.js';

export function formatJobs(jobs: SessionJob[]): string {
  if (jobs.length === 0) return 'no processes in session sandboxes\n';
  const rows = jobs.map((j) => [
    String(j.pid),
    String(j.pid_in_sandbox),
    j.outlived_command ? 'job' : 'command',
    j.started_at.replace(/\.\d+Z$/, 'Z'),
    j.sandbox,
    j.cwd,
    j.argv.map(displayWord).join(' '), // a sandboxed process named it: shown as every prompt shows a command
  ]);
  const head = ['PID', 'IN-SANDBOX', 'STATE', 'STARTED', 'SANDBOX', 'CWD', 'COMMAND'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(width[i]))).join('  ');
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}

/** `gate jobs`: the processes in this session's sandboxes. */
export async function list(values: { json: boolean }): Promise<number> {
  try {
    const r = await approvalCall(gatePaths(process.env), 'jobs');
    const jobs = r.jobs ?? [];
    process.stdout.write(values.json ? JSON.stringify(jobs, null, 2) + '\n' : formatJobs(jobs));
    return 0;
  } catch (e) {
    process.stderr.write(`gate: ${(e as Error).message}\n`);
    return 3;
  }
}

/** `gate jobs kill <pid|all>` (target checked by src/cli/args/jobs.ts): exit 1 when nothing was ended. */
export async function kill(values: { target: string; json: boolean }): Promise<number> {
  const { target } = values;
  try {
    const r = await approvalCall(gatePaths(process.env), 'jobs-kill', { target: target === 'all' ? 'all' : Number(target) });
    const killed = Number(r.killed ?? 0);
    if (values.json) process.stdout.write(JSON.stringify({ killed }) + '\n');
    else process.stdout.write(`killed ${killed} process${killed === 1 ? '' : 'es'}\n`);
    return killed > 0 || target === 'all' ? 0 : 1;
  } catch (e) {
    process.stderr.write(`gate: ${(e as Error).message}\n`);
    return 3;
  }
}
