/**
 * The exec/ layer's public surface: other layers import from here, files inside exec/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: the run plan (also built by the daemon for the native gate-sh), running bash under the exec gate
 * and the sandbox, the run sequence (run-call.ts), signals, gate-sh's arguments. Spawns processes; the
 * daemon's plan and decisions come in through the client's checked replies.
 */
export { findBash } from './bash.js';
export { clientPlan, envRecord, nativeRequest, type PlanRequest } from './client-plan.js';
export { daemonPlanner, type DaemonPlannerOptions } from './daemon-planner.js';
export { checkPermissionPaths, EscalationArgsError, escalationFields, type EscalationFields, sandboxAtMost } from './escalation-args.js';
export { LIBGATE, SHIMS_DIR, withExecGate } from './exec-gate.js';
export { preloadFirst } from './preload-first.js';
export { ArgsError, parseShellArgs, type ShellInvocation, USAGE } from './gate-sh-args.js';
export { type LocalPlan, localPlanner } from './local-planner.js';
export { gateNative, type GateNative } from './native.js';
export type { RunPlan } from './plan.js';
export { endAsRun, inheritedFds, runPlan } from './run-bash.js';
export { type Attempt, EXIT_DENIED, preflightOf, runCall, type Runner, type StartUpEnd, TAIL_BYTES, utf8Tail } from './run-call.js';
export { denialReason, sandboxDenial } from './sandbox-denial.js';
export { rerunJustification } from './sandbox-rerun.js';
export { findBwrap, TRUSTED_BWRAP_DIRS } from './sandbox-run.js';
export { withSandbox } from './sandbox-step.js';
export { readsStartUpFiles, startUpRequest, watchStartUp } from './start-up-gate.js';
