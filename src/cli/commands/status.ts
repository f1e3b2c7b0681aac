/** `gate status [--json]`: what the daemon runs with (policy files, reload error, approval and sandbox policy,
 * approvers, pending prompts), and per agent on this machine whether it really uses gate-sh (gate doctor's
 * summary). */
import { parseArgs } from 'node:util';
import { gatePaths } from '../../protocol/paths.js';
import { approvalCall } from '../../client/approval-client.js';
import { formatStatus } from '../../client/status-view.js';
import { diagnose, formatAgentSummary } from '../../integrations/agents/doctor.js';
import { reachDaemon, unreachableMessage } from '../../client/reach.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write('usage: gate status [--json]\n');
    return 0;
  }
  const paths = gatePaths(process.env);
  let status: Record<string, unknown>;
  const agents = diagnose(process.env);
  try {
    status = (await approvalCall(paths, 'status')).status as Record<string, unknown>;
  } catch (e) {
    // a daemon that holds the session lock but cannot be reached from here is running, not absent: say so
    const reach = await reachDaemon(paths, process.env, 1000);
    const message = reach.state === 'unreachable' ? unreachableMessage(reach.why) : (e as Error).message;
    if (values.json) process.stdout.write(JSON.stringify({ running: false, session: paths.session, error: message, agents }) + '\n');
    else process.stderr.write(`gate-sh: ${message}\n${formatAgentSummary(agents)}`);
    return 3;
  }
  process.stdout.write(values.json ? JSON.stringify({ running: true, ...status, agents }, null, 2) + '\n' : formatStatus(status) + formatAgentSummary(agents));
  return 0;
}
