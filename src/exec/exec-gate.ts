/**
 * The exec-gate step of a run plan: the environment that makes every exec of the run ask the daemon
 * (libgate.so in LD_PRELOAD, the socket paths, GATE_RUN), the nested-shell shims first on PATH, and the
 * kernel layer: the plan started by shims/gate-launch, whose seccomp supervisor asks about every exec the
 * kernel sees (static programs, raw syscalls, a cleared environment included).
 * Pure but for withPreload's read of the shims build's preload-first file (preload-first.ts): paths in,
 * plan out. Apply it last (after the sandbox step): the program it marks as already checked is the one
 * actually started, and for a bubblewrap wrapper the command after `--` is let through once without asking
 * (pre-flight decided it).
 */
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CommandLine, GATE_GUARD_ENV } from '../sandbox/index.js';
import type { GatePaths } from '../paths/index.js';
import { type ExecGateVariable, EXEC_GATE_VARIABLES as V } from '../protocol/index.js';
import { preloadFirst } from './preload-first.js';

/** Where the built shims live: <repo>/shims (dist/src/exec/ → ../../../shims). */
export const SHIMS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shims');
export const LIBGATE = join(SHIMS_DIR, 'libgate.so');
export const SHIM_BIN = join(SHIMS_DIR, 'bin');

export interface ExecGateOptions {
  paths: Pick<GatePaths, 'requestSock' | 'streamSock' | 'escalateSock' | 'clientDir'>;
  runId: string;
  /** pid of the process that spawns the plan (its children's parent): binds the "checked" mark */
  parentPid: number;
  /** default SHIMS_DIR */
  shimsDir?: string;
  /** the program a wrapper (bwrap) starts; found after `--` when omitted */
  inner?: string;
  /** per-attempt reply timeout for the shims (GATE_EXEC_TIMEOUT_MS) */
  timeoutMs?: number;
  /** start the plan through gate-launch, the kernel layer (default true; docs/exec-gate.md) */
  kernel?: boolean;
}

export const LAUNCHER = join(SHIMS_DIR, 'gate-launch');

/** The gate's own variables (what libgate.so puts back into every exec it allows). Their names are the
 * C side's too (shared-with-c.ts): a name not listed there does not compile. */
export function execGateVars(o: ExecGateOptions): Record<string, string> {
  const v: Partial<Record<ExecGateVariable, string>> = {
    GATE_RUN: o.runId,
    GATE_REQUEST_SOCK: o.paths.requestSock,
    GATE_STREAM_SOCK: o.paths.streamSock,
    GATE_ESCALATE_SOCK: o.paths.escalateSock,
    GATE_CLIENT_DIR: o.paths.clientDir,
  };
  if (o.timeoutMs) v.GATE_EXEC_TIMEOUT_MS = String(o.timeoutMs);
  return v;
}

/** LD_PRELOAD with libgate.so first, the caller's own entries kept after it; in a sanitizer test build of
 * the shims, the sanitizer's runtime before libgate.so (preload-first.ts). */
export function withPreload(current: string | undefined, lib: string, first = preloadFirst(dirname(lib))): string {
  const own = first ? [first, lib] : [lib];
  const rest = (current ?? '').split(/[: ]/).filter((e) => e !== '' && !own.includes(e));
  return [...own, ...rest].join(':');
}

/** PATH with the nested-shell shims first (once). */
export function withShimPath(current: string | undefined, shimBin: string): string {
  const rest = (current ?? '/usr/local/bin:/usr/bin:/bin').split(':').filter((e) => e !== shimBin);
  return [shimBin, ...rest].join(':');
}

/** Add the exec gate to a plan (or a spawn of the escalation runner). */
export function withExecGate<T extends CommandLine>(plan: T, o: ExecGateOptions): T & { env: Record<string, string> } {
  const shims = o.shimsDir ?? SHIMS_DIR;
  const env: Record<string, string> = { ...plan.env };
  for (const k of Object.keys(env))
    if (k.startsWith(V.checked) || k === V.escalate || k === V.innerProgram || k === V.kernelSock || k === GATE_GUARD_ENV) delete env[k];
  // a run without a sandbox: the launcher mounts the gate's guard before the program (shims/gate-guard.c)
  if (plan.guard) env[GATE_GUARD_ENV] = plan.guard;
  Object.assign(env, execGateVars(o));
  env.LD_PRELOAD = withPreload(env.LD_PRELOAD, join(shims, 'libgate.so'));
  env.PATH = withShimPath(env.PATH, join(shims, 'bin'));
  const kernel = o.kernel !== false;
  // under the launcher the program's parent is the supervisor, whose pid nobody knows yet: the mark is the
  // run's own (0), taken out of the environment by the program's constructor like any mark
  env[V.checked] = `${kernel ? 0 : o.parentPid}:${plan.program}`;
  let args = plan.args;
  const sep = basename(plan.program) === 'bwrap' ? args.indexOf('--') : -1;
  if (sep >= 0) {
    // inside the sandbox the library and shims must stay readable, whatever the profile lets the
    // command read: without them the loader skips LD_PRELOAD and the run would go ungated
    args = [...args.slice(0, sep), '--ro-bind', shims, shims, ...args.slice(sep)];
  }
  const inner = o.inner ?? (sep >= 0 ? args[sep + 4] : undefined);
  if (inner) env[V.innerProgram] = inner;
  // the kernel layer: the whole tree under a seccomp filter whose supervisor asks the same daemon
  if (kernel) return { ...plan, program: join(shims, 'gate-launch'), args: [plan.program, ...args], env };
  return { ...plan, args, env };
}
