/**
 * The run machine's planner for a client that runs the daemon's own plan: the pre-flight carries
 * a plan request (gate-sh's arguments, the client's environment, descriptors and shims folder), the daemon
 * decides and builds the plan with the same builders as for every gate-sh (src/exec/client-plan.ts), and
 * this reads it back as a program to start: the denials to print, the error, or the exact program, argv,
 * working directory and environment (the client's own with the plan's changes). What the native gate-sh
 * (shims/gate-sh-native.c) does in C; `gate mcp` runs its calls in its own process through it.
 * Pure but for reading the daemon's start-up key. Trust: the plan is run as given, never widened.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Outgoing } from '../transport/index.js';
import type { PlanReply, PlanRequest, PreflightReply } from '../protocol/index.js';
import { type GatePaths, RUNTIME_LAYOUT } from '../paths/index.js';
import type { RunPlan } from './plan.js';
import { preflightOf, type FirstStep, type Planner, type RerunStep } from './run-call.js';

export interface DaemonPlannerOptions {
  /** gate-sh's arguments (escalation flags, -c|-lc, the script) */
  argv: string[];
  script: string;
  login: boolean;
  /** the working directory as getcwd() gives it in there (symlinks resolved) */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** the gate-sh launcher the call stands for: its path is bash's $0, its folder the shims' */
  gateSh: string;
  shimsDir: string;
  paths: GatePaths;
}

export function daemonPlanner(o: DaemonPlannerOptions): Planner<RunPlan> {
  const envList = Object.entries(o.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
  const plan: PlanRequest = { argv: o.argv, argv0: o.gateSh, env: envList, fds: [], shims: o.shimsDir };
  const withKey = (): void => {
    const key = startUpKey(o.paths);
    if (key !== undefined) plan.start_up_key = key;
    else delete plan.start_up_key;
  };
  withKey();
  const request: Outgoing = { ...preflightOf(o.login, o.script, o.cwd), sandbox_permissions: 'use_default', plan };
  return {
    request,
    flagsAtDaemon: o.argv.length > 2,
    restarted: withKey, // the new daemon wrote a new start-up key
    first: async (reply) => firstStep(reply.plan, o.env),
    rerunRequest: (why, justification) => {
      const { start_up_key: _key, ...planNoKey } = plan;
      return { ...request, sandbox_permissions: 'require_escalated', justification, plan: { ...planNoKey, rerun_why: why } };
    },
    second: (reply) => rerunStep(reply, o.env),
  };
}

function firstStep(pl: PlanReply | undefined, env: NodeJS.ProcessEnv): FirstStep<RunPlan> {
  if (!pl) return { kind: 'none' };
  if (pl.denials?.length) return { kind: 'denied', lines: pl.denials };
  if (pl.error !== undefined) return { kind: 'refused', error: pl.error };
  const ready = readyPlan(pl, env);
  if (!ready) return { kind: 'none' };
  const notice = pl.notice !== undefined ? { notice: pl.notice } : {};
  return { kind: 'run', plan: ready, rerun: pl.rerun === true, anyStatus: pl.rerun_any_status === true, ...notice };
}

function rerunStep(reply: PreflightReply, env: NodeJS.ProcessEnv): RerunStep<RunPlan> {
  const pl = reply.plan;
  if (pl?.error !== undefined) return { error: pl.error, rerun: false };
  const rerun = pl?.rerun_of?.rerun === true;
  return { notice: pl?.rerun_of?.notice, rerun, plan: rerun && pl ? readyPlan(pl, env) : undefined };
}

/** The plan as a program to start; undefined when the reply holds none this client can run (a script
 * descriptor is the Node gate-sh's: such scripts never come here). */
function readyPlan(pl: PlanReply, env: NodeJS.ProcessEnv): RunPlan | undefined {
  if (!pl.program || !pl.cwd || !pl.args?.length || pl.script_fd) return undefined;
  const startUp = pl.start_up && pl.start_up.ready > 2 && pl.start_up.go > 2 ? pl.start_up : undefined;
  // no inherited descriptors: gate mcp's calls pass none on
  return { program: pl.program, args: pl.args, cwd: pl.cwd, env: planEnv(env, pl), fds: [], sandboxed: pl.sandboxed === true, startUp };
}

/** The client's environment with the plan's changes: a changed name keeps its place, new names come last
 * (as shims/gate-sh-native.c's plan_env). */
export function planEnv(env: NodeJS.ProcessEnv, pl: Pick<PlanReply, 'env_set' | 'env_unset'>): Record<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) if (v !== undefined) m.set(k, v);
  for (const e of pl.env_set ?? []) {
    const eq = e.indexOf('=');
    if (eq > 0) m.set(e.slice(0, eq), e.slice(eq + 1));
  }
  for (const k of pl.env_unset ?? []) m.delete(k);
  return Object.fromEntries(m);
}

/** The daemon's start-up key, as the native gate-sh reads it; undefined when it cannot be read. */
function startUpKey(paths: GatePaths): string | undefined {
  try {
    const k = readFileSync(join(paths.approvalDir, RUNTIME_LAYOUT.startUpKey), 'utf8').trim();
    return k || undefined;
  } catch {
    return undefined;
  }
}
