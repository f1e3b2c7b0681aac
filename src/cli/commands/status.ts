/** `gate status [--json]`: what the daemon runs with (policy files, reload error, approval and sandbox policy,
 * approvers, pending prompts), and per agent on this machine whether it really uses gate-sh (gate doctor's
 * summary). */
import { gatePaths } from '../../paths/index.js';
import { approvalCall, formatStatus, reachDaemon, unreachableMessage } from '../../client/index.js';
import { diagnose, formatAgentSummary } from '../../integrations/index.js';
import { callerSettings, DEFAULT_CONFIG, type GateConfig, settingsConflict } from '../../config/index.js';

/** Options, as src/cli/args/status.ts declares them. */
export interface StatusArgs {
  json: boolean;
}

export async function run(values: StatusArgs): Promise<number> {
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
    else process.stderr.write(`gate: ${message}\n${formatAgentSummary(agents)}`);
    return 3;
  }
  // settings in this environment that the daemon refuses (gate-sh and gate explain refuse them the same way)
  const asked = callerSettings(process.env);
  const running = { sandbox_policy: status.sandbox_policy, approval_policy: (status.config as Record<string, unknown> | undefined)?.approval_policy };
  const conflict = asked ? settingsConflict({ ...DEFAULT_CONFIG, ...running } as GateConfig, asked, paths.session) : undefined;
  const extra = conflict ? { caller_settings: conflict } : {};
  if (values.json) process.stdout.write(JSON.stringify({ running: true, ...status, agents, ...extra }, null, 2) + '\n');
  else process.stdout.write(formatStatus(status) + (conflict ? `this environment: refused: ${conflict}\n` : '') + formatAgentSummary(agents));
  return 0;
}
