/**
 * The run plan the daemon builds for the native gate-sh (shims/gate-sh.c): the same pure builders the Node
 * gate-sh uses (parseShellArgs, planRun), fed with the client's own argv, environment and descriptors, and
 * returned as the exact program, argv and environment changes to exec, so the two entry points cannot
 * drift. Pure apart from planRun's lookups (bash, bwrap, the filesystem view of the sandbox step).
 * Trust: the client is the caller itself (same user, outside any sandbox); the plan follows the reply's
 * action and sandbox exactly as the Node client's does and never widens them.
 */
import { parseShellArgs, ArgsError, type ShellInvocation } from './gate-sh-args.js';
import { existsSync } from 'node:fs';
import { checkPermissionPaths, EscalationArgsError, escalationFields, sandboxAtMost } from './escalation-args.js';
import {
  type Action,
  type PlanReply,
  type PlanRequest,
  type PreflightReply,
  type PreflightRequest,
  ProtocolError,
  type SubcommandReply,
} from '../protocol/index.js';
import { findBash } from './bash.js';
import { displayCommand, displayScript, visibleText } from '../text/index.js';
import { gatePaths } from '../paths/index.js';
import { planRun, type RunPlan } from './plan.js';
import { rerunDecision } from './sandbox-rerun.js';
import { readsStartUpFiles, startUpFields } from './start-up-gate.js';

// the wire types of the plan live in protocol/ (the wire layer); re-exported for the plan's users
export type { PlanReply, PlanRequest } from '../protocol/index.js';

/**
 * What the Node client puts into its pre-flight from its arguments and environment, for a native client's
 * pre-flight, before the decision: the escalation flags' fields (--escalate, --with-permissions,
 * --justification; not on the rerun, which asks its own escalation), and the start-up phase exactly when
 * the Node client would ask for it (bash reads start-up files, the key was readable; never for the rerun,
 * whose plan ends no phase). Bad escalation flags throw a ProtocolError before anything is decided: the
 * native client then hands over to the Node client, which says what is wrong (exit 2, as before).
 */
export function nativeRequest(req: PreflightRequest & { plan: PlanRequest }): void {
  const p = req.plan;
  let inv: ShellInvocation;
  try {
    inv = parseShellArgs(p.argv, p.argv0);
  } catch {
    return; // arguments it cannot read: clientPlan refuses the plan
  }
  const env = envRecord(p.env);
  if (p.rerun_why === undefined && Object.keys(inv.escalation).length) {
    try {
      const fields = escalationFields(inv.escalation, req.cwd, env.HOME ?? '/');
      checkPermissionPaths(fields, existsSync);
      Object.assign(req, fields);
    } catch (e) {
      if (!(e instanceof EscalationArgsError)) throw e;
      throw new ProtocolError('malformed', `preflight request ${req.id}: ${e.message}`, req.id);
    }
  }
  // the call's sandbox at most holds for its rerun too (a rerun that stays in a sandbox stays in this one)
  if (inv.sandbox !== undefined) {
    try {
      req.sandbox_at_most = sandboxAtMost(inv.sandbox, req.cwd, env.HOME ?? '/');
    } catch (e) {
      if (!(e instanceof EscalationArgsError)) throw e;
      throw new ProtocolError('malformed', `preflight request ${req.id}: ${e.message}`, req.id);
    }
  }
  if (p.start_up_key !== undefined && p.rerun_why === undefined && readsStartUpFiles(inv, env)) req.start_up = startUpFields(p.start_up_key, env);
}

/** The client's environment as an object, first entry of a name winning (as getenv). */
export function envRecord(list: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of list) {
    const eq = e.indexOf('=');
    if (eq <= 0) continue;
    const k = e.slice(0, eq);
    if (!Object.hasOwn(env, k)) env[k] = e.slice(eq + 1);
  }
  return env;
}

/** What turns `from` into `to`: changed or new entries in `to`'s order, and removed names. */
export function envDelta(from: Record<string, string>, to: Record<string, string>): { set: string[]; unset: string[] } {
  const set: string[] = [];
  for (const [k, v] of Object.entries(to)) if (from[k] !== v) set.push(`${k}=${v}`);
  const unset = Object.keys(from).filter((k) => !Object.hasOwn(to, k));
  return { set, unset };
}

const display = (argv: string[]): string => displayCommand(argv, 400);

const NO_APPROVER = /^approval needed for '.*' but no approver is attached/s;

/** The lines a denied pre-flight prints (without the `gate-sh: ` prefix). */
export function denialLines(reply: Pick<PreflightReply, 'subcommands'> & { action: Action }, script: string): string[] {
  const denied = (reply.subcommands ?? []).filter((s: SubcommandReply) => s.action?.type === 'Deny');
  const lines: string[] = [];
  for (const s of denied) {
    const reason = (s.action as { reason: string }).reason;
    // the no-approver denial already names the command ("approval needed for '<cmd>' but no approver is attached")
    lines.push(NO_APPROVER.test(reason) ? visibleText(reason) : `denied: ${display(s.argv)}: ${visibleText(reason)}`);
  }
  if (denied.length === 0) {
    const first = script.split('\n', 1)[0];
    lines.push(`denied: ${displayScript(first, 80)}: ${visibleText((reply.action as { reason: string }).reason)}`);
  }
  return lines;
}

/** Whether a plan's attempt is in the turn's sandbox (only those are offered the on-failure rerun). */
export function turnDefault(action: Action): boolean {
  return action.type === 'Run' || (action.type === 'Escalate' && action.execution.type === 'TurnDefault');
}

/** The plan for a native client's pre-flight, or why nothing may run. Never throws. */
export function clientPlan(
  req: Pick<PreflightRequest, 'script' | 'cwd' | 'flag'> & { plan: PlanRequest },
  reply: Pick<PreflightReply, 'run_id' | 'sandbox' | 'subcommands' | 'start_up' | 'sandbox_narrowed'> & { action: Action },
  requestSock: string,
): PlanReply {
  const p = req.plan;
  try {
    const env = envRecord(p.env);
    // the client found this daemon by its own reading of the paths: the run's exec gate must reach the same one
    const paths = gatePaths(env);
    if (paths.requestSock !== requestSock)
      return { error: `protocol error: the native gate-sh reached the daemon at ${requestSock}, but its environment names another session's sockets` };
    const inv = parseShellArgs(p.argv, p.argv0);
    // the client read its own arguments to find the script: the daemon's reading must agree
    const same = (inv.login ? '-lc' : '-c') === req.flag && (inv.source.kind !== 'command' || inv.source.script === req.script);
    if (!same || inv.info || inv.pty !== undefined || inv.interactive)
      return { error: 'protocol error: the native gate-sh and the daemon read the arguments differently' };
    if (p.rerun_why === undefined && reply.action.type === 'Deny') return { denials: denialLines(reply, req.script) };
    const planFor = (startUp: boolean) =>
      planRun({
        reply,
        invocation: inv,
        script: req.script,
        env,
        cwd: req.cwd,
        bash: findBash(),
        inheritedFds: p.fds,
        shimsDir: p.shims,
        startUp,
        paths,
      });
    if (p.rerun_why !== undefined) {
      const offer = rerunDecision(reply.action, p.rerun_why);
      if (!offer.rerun) return { rerun_of: offer };
      return { ...wire(planFor(false), env, req.script, false), rerun_of: offer };
    }
    const plan = planFor(reply.start_up === true);
    const out = wire(plan, env, req.script, plan.sandboxed === true && turnDefault(reply.action));
    // the client asks the daemon's decision after a 0 too (the decision itself is the same as the Node client's)
    if (out.rerun && reply.sandbox_narrowed) out.rerun_any_status = true;
    return out;
  } catch (e) {
    if (e instanceof ArgsError) return { error: `protocol error: the daemon cannot read the arguments (${e.message})` };
    return { error: (e as Error).message };
  }
}

/** The plan as the native client reads it: its environment as changes to the client's own (env). */
function wire(plan: RunPlan, env: Record<string, string>, script: string, rerun: boolean): PlanReply {
  const { set, unset } = envDelta(env, plan.env);
  const out: PlanReply = { program: plan.program, args: plan.args, cwd: plan.cwd, env_set: set, env_unset: unset, sandboxed: plan.sandboxed === true, rerun };
  if (plan.startUp) out.start_up = plan.startUp;
  if (plan.scriptFd) {
    const data = plan.scriptFd.data;
    out.script_fd = { fd: plan.scriptFd.fd, prelude: data.subarray(0, data.length - Buffer.byteLength(script, 'utf8')).toString('utf8') };
  }
  return out;
}
