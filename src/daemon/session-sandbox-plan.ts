/**
 * The native gate-sh's plan joining its session sandbox: the daemon builds that client's plan
 * (src/exec/client-plan.ts) and, for a turn-sandbox attempt, rewrites it to enter the sandbox's namespaces
 * as the Node client does for its own plan (src/exec/session-client.ts). Not pure: asks the registry, which
 * may start a holder. Trust: the plan is the daemon's own; a sandbox that cannot be had leaves the plan as
 * it was (a sandbox of its own, never a wider one). The only place a holder's mounts come from.
 */
import { joinPlan, sessionSandboxOff, sessionShape } from '../sandbox/index.js';
import type { SessionSandboxes } from './session-sandbox.js';
import type { PlanReply } from '../protocol/index.js';

/** The part of the native client's plan that joining touches. */
type PlanPart = Pick<PlanReply, 'program' | 'args' | 'sandboxed'>;

/** The client's environment list ("NAME=value"), first entry of a name winning (as getenv). */
function getenv(env: readonly string[], name: string): string | undefined {
  return env.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
}

export async function joinWirePlan<T extends PlanPart>(plan: T, env: readonly string[], sessions: SessionSandboxes): Promise<T> {
  if (plan.program === undefined || plan.args === undefined || !plan.sandboxed) return plan;
  if (sessionSandboxOff({ GATE_SESSION_SANDBOX: getenv(env, 'GATE_SESSION_SANDBOX') })) return plan;
  const shape = sessionShape({ program: plan.program, args: plan.args });
  if (!shape) return plan;
  const join = await sessions.joinShape(shape);
  return join ? { ...plan, args: joinPlan({ program: plan.program, args: plan.args }, join).args } : plan;
}
