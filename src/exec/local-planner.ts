/**
 * The run machine's planner for the Node gate-sh (src/cli/gate-sh.ts): the pre-flight carries the script
 * (its bytes as base64 when they are not UTF-8) and the escalation gate-sh read from its flags, and the plan
 * is built here from the daemon's reply with the same builders the daemon uses for a native client's plan
 * (src/exec/client-plan.ts: denialLines, planRun, turnDefault; rerunDecision for the rerun's answer). It is
 * the planner for what the daemon's plan does not carry: a PTY, bytes that are not UTF-8, a script too large
 * for an argument, inherited descriptors as Node sees them. A turn-sandbox attempt joins the session sandbox.
 * Not pure: planRun's lookups (bash, bwrap, the filesystem) and the session-sandbox round trip. Trust: the
 * plan follows the reply's action and sandbox exactly and never widens them.
 */
import type { Outgoing, RequestClient } from '../transport/index.js';
import { newId } from '../protocol/index.js';
import { findBash } from './bash.js';
import { denialLines, turnDefault } from './client-plan.js';
import { planRun, type PlanInput, type RunPlan } from './plan.js';
import { rerunDecision } from './sandbox-rerun.js';
import { joinSessionSandbox } from './session-client.js';
import type { Planner } from './run-call.js';

/** A plan the Node gate-sh runs: with its own stdio, or hosted in a PTY. */
export interface LocalPlan {
  plan: RunPlan;
  pty: boolean;
}

export interface LocalPlannerOptions {
  /** the first pre-flight (without a plan request) */
  request: Outgoing;
  /** planRun's input but the reply (for the first attempt: with inherited descriptors, or PTY hosting) */
  input: Omit<PlanInput, 'reply' | 'startUp' | 'sandbox' | 'bash'>;
  pty: boolean;
  /** a failed turn-sandbox attempt's stderr can be seen (src/cli/gate-sh.ts stderrRelay): the rerun is offered */
  relay: boolean;
  /** a new daemon wrote a new start-up key: the request's start-up phase again */
  restarted(): void;
  env: Record<string, string | undefined>;
}

export function localPlanner(o: LocalPlannerOptions): Planner<LocalPlan> {
  return {
    request: o.request,
    flagsAtDaemon: false, // gate-sh read its escalation flags itself (exit 2 before asking)
    restarted: o.restarted,
    first: async (reply, client: RequestClient) => {
      if (reply.action.type === 'Deny') return { kind: 'denied', lines: denialLines(reply, o.input.script) };
      try {
        if (o.pty) {
          // a terminal program gets a terminal of its own; the PTY is never used without one (src/terminal/pty-host.ts)
          const plan = planRun({ ...o.input, bash: findBash(), inheritedFds: undefined, reply, sandbox: { interactive: true } });
          return { kind: 'run', plan: { plan, pty: true }, rerun: false, anyStatus: false };
        }
        let plan = planRun({ ...o.input, bash: findBash(), reply, startUp: reply.start_up === true });
        // only a turn-sandbox attempt is offered a rerun: explicit permissions are what the caller asked for
        const turn = turnDefault(reply.action);
        // a turn-sandbox attempt joins the session sandbox: its background jobs outlive it (docs/sandbox.md)
        if (turn && plan.sandboxed) plan = await joinSessionSandbox(plan, client, o.env);
        const rerun = plan.sandboxed === true && turn && o.relay;
        return { kind: 'run', plan: { plan, pty: false }, rerun, anyStatus: rerun && reply.sandbox_narrowed === true };
      } catch (e) {
        return { kind: 'refused', error: (e as Error).message };
      }
    },
    // no start-up phase for the rerun: its plan has no hand-over that would end one
    rerunRequest: (_why, justification) => ({ ...o.request, id: newId(), start_up: undefined, sandbox_permissions: 'require_escalated', justification }),
    second: (reply, why) => {
      const offer = rerunDecision(reply.action, why);
      if (!offer.rerun || reply.action.type !== 'Escalate') return { notice: offer.notice, rerun: false };
      try {
        return { notice: offer.notice, rerun: true, plan: { plan: planRun({ ...o.input, bash: findBash(), reply }), pty: false } };
      } catch (e) {
        return { notice: offer.notice, error: (e as Error).message, rerun: false };
      }
    },
  };
}
