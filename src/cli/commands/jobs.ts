/**
 * `gate jobs [--json]` and `gate jobs kill <pid|all>`: what runs in this session's sandboxes — the
 * background jobs and servers gated commands left running (docs/sandbox.md, "Session sandboxes") — and
 * ending them. Talks to the daemon on the approval channel, which no sandboxed process can reach. Not pure.
 */
import { parseArgs } from 'node:util';
import { gatePaths } from '../../protocol/paths.js';
import { approvalCall } from '../../client/approval-client.js';
import type { SessionJob } from '../../protocol/approval.js';

const USAGE = `usage: gate jobs [--json]          what runs in this session's sandboxes
       gate jobs kill <pid|all>   end one (its pid as listed) or all of them
`;

export function formatJobs(jobs: SessionJob[]): string {
  if (jobs.length === 0) return 'no processes in session sandboxes\n';
  const rows = jobs.map((j) => [
    String(j.pid),
    String(j.pid_in_sandbox),
    j.outlived_command ? 'job' : 'command',
    j.started_at.replace(/\.\d+Z$/, 'Z'),
    j.sandbox,
    j.cwd,
    j.argv.join(' '),
  ]);
  const head = ['PID', 'IN-SANDBOX', 'STATE', 'STARTED', 'SANDBOX', 'CWD', 'COMMAND'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(width[i]))).join('  ');
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const paths = gatePaths(process.env);
  try {
    if (positionals.length === 0) {
      const r = await approvalCall(paths, 'jobs');
      const jobs = r.jobs ?? [];
      process.stdout.write(values.json ? JSON.stringify(jobs, null, 2) + '\n' : formatJobs(jobs));
      return 0;
    }
    const [verb, target, ...rest] = positionals;
    if (verb !== 'kill' || target === undefined || rest.length || !(target === 'all' || /^[1-9]\d*$/.test(target))) {
      process.stderr.write(`gate-sh: ${USAGE}`);
      return 2;
    }
    const r = await approvalCall(paths, 'jobs-kill', { target: target === 'all' ? 'all' : Number(target) });
    const killed = Number(r.killed ?? 0);
    if (values.json) process.stdout.write(JSON.stringify({ killed }) + '\n');
    else process.stdout.write(`killed ${killed} process${killed === 1 ? '' : 'es'}\n`);
    return killed > 0 || target === 'all' ? 0 : 1;
  } catch (e) {
    process.stderr.write(`gate-sh: ${(e as Error).message}\n`);
    return 3;
  }
}
