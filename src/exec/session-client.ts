/**
 * The Node gate-sh's side of session sandboxes (docs/sandbox.md): a turn-sandbox plan asks the daemon for
 * the namespaces of its session sandbox (a `session-sandbox` request; src/daemon/session-sandbox.ts) and
 * enters them (src/sandbox/session-join.ts), so that what the script leaves running outlives it as under
 * bash. Not pure: one request-channel round trip. Trust: no answer, an error or `join: null` leaves the plan
 * as it was — a sandbox of its own, with exactly the same mounts; never a wider one.
 */
import type { RequestClient } from '../transport/index.js';
import type { SessionSandboxReply } from '../protocol/index.js';
import { type CommandLine, joinPlan, sessionSandboxOff, sessionShape } from '../sandbox/index.js';

export async function joinSessionSandbox<T extends CommandLine>(plan: T, client: RequestClient, env: Record<string, string | undefined>): Promise<T> {
  if (sessionSandboxOff(env)) return plan;
  const shape = sessionShape(plan);
  if (!shape) return plan;
  try {
    const reply = await client.request<SessionSandboxReply>(
      // the key only: the daemon holds the mounts of a plan it made with this key itself (src/daemon/session-sandbox.ts)
      { type: 'session-sandbox', key: shape.key, own_network: shape.ownNetwork },
      { timeoutMs: 5000, retries: 1 },
    );
    if (reply.type !== 'session-sandbox' || !reply.join) return plan;
    return joinPlan(plan, reply.join);
  } catch {
    return plan; // an older daemon, or none answering in time: today's sandbox of its own
  }
}
