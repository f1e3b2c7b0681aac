/**
 * Server-side field validation of request-channel messages (the codec checks only the envelope). Each
 * validator returns the typed message or throws ProtocolError('malformed') naming the bad field.
 */
import { ProtocolError, type Envelope } from './codec.js';
import type { ExecRequest, ExecReused, PreflightRequest, RunFinished, SessionSandboxRequest, SessionSandboxStale, StartUpEnd } from './messages.js';
import { decodeWire } from './exec-gate-wire.js';

function fail(m: Envelope, what: string): never {
  throw new ProtocolError('malformed', `${m.type} request ${m.id}: ${what}`, m.id);
}

function str(m: Envelope, k: string, opt = false): void {
  if (opt && m[k] === undefined) return;
  if (typeof m[k] !== 'string') fail(m, `"${k}" must be a string`);
}

function strArray(m: Envelope, k: string, opt = false, nonEmpty = false): void {
  const v = m[k];
  if (opt && v === undefined) return;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) fail(m, `"${k}" must be a list of strings`);
  if (nonEmpty && v.length === 0) fail(m, `"${k}" must not be empty`);
}

function int(m: Envelope, k: string): void {
  if (!Number.isInteger(m[k])) fail(m, `"${k}" must be an integer`);
}

function absolute(m: Envelope, k: string): void {
  str(m, k);
  if (!(m[k] as string).startsWith('/')) fail(m, `"${k}" must be an absolute path`);
}

const SANDBOX_PERMISSIONS = new Set(['use_default', 'require_escalated', 'with_additional_permissions']);

export function validatePreflight(m: Envelope): PreflightRequest {
  decodeWire(m);
  str(m, 'shell');
  if (m.flag !== '-c' && m.flag !== '-lc') fail(m, '"flag" must be "-c" or "-lc"');
  str(m, 'script');
  absolute(m, 'cwd');
  int(m, 'pid');
  if (!SANDBOX_PERMISSIONS.has(m.sandbox_permissions as string))
    fail(m, '"sandbox_permissions" must be use_default, require_escalated or with_additional_permissions');
  const ap = m.additional_permissions;
  if (ap !== undefined && (typeof ap !== 'object' || ap === null || Array.isArray(ap))) fail(m, '"additional_permissions" must be an object');
  str(m, 'justification', true);
  const at = m.sandbox_at_most;
  // (its fields are read by the daemon's sandbox parser, src/daemon/run-sandbox.ts)
  if (at !== undefined && (typeof at !== 'object' || at === null || Array.isArray(at))) fail(m, '"sandbox_at_most" must be an object');
  str(m, 'session_run', true);
  strArray(m, 'prefix_rule', true, true);
  if (m.ask !== undefined && typeof m.ask !== 'boolean') fail(m, '"ask" must be a boolean');
  const su = m.start_up as Record<string, unknown> | undefined;
  if (su !== undefined) {
    const sub = { ...su, type: m.type, id: m.id } as Envelope;
    if (typeof su !== 'object' || su === null || Array.isArray(su)) fail(m, '"start_up" must be an object');
    str(sub, 'key');
    str(sub, 'home', true);
    str(sub, 'bash_env', true);
    str(sub, 'tmpdir', true);
    strArray(sub, 'functions');
  }
  if (m.plan !== undefined) validatePlanRequest(m);
  const st = m.settings;
  if (st !== undefined && (typeof st !== 'object' || st === null || Array.isArray(st) || Object.values(st).some((v) => typeof v !== 'string')))
    fail(m, '"settings" must be an object of strings');
  return m as unknown as PreflightRequest;
}

function validatePlanRequest(m: Envelope): void {
  const p = m.plan as Envelope;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) fail(m, '"plan" must be an object');
  const bad = (what: string): never => fail(m, `"plan.${what}`);
  if (!Array.isArray(p.argv) || p.argv.some((x) => typeof x !== 'string')) bad('argv" must be a list of strings');
  if (typeof p.argv0 !== 'string') bad('argv0" must be a string');
  if (!Array.isArray(p.env) || p.env.some((x) => typeof x !== 'string')) bad('env" must be a list of strings');
  if (!Array.isArray(p.fds) || p.fds.some((x) => !Number.isInteger(x) || (x as number) < 3)) bad('fds" must be a list of descriptors above 2');
  if (typeof p.shims !== 'string' || !p.shims.startsWith('/')) bad('shims" must be an absolute path');
  if (p.rerun_why !== undefined && typeof p.rerun_why !== 'string') bad('rerun_why" must be a string');
  if (p.start_up_key !== undefined && typeof p.start_up_key !== 'string') bad('start_up_key" must be a string');
}

export function validateExec(m: Envelope): ExecRequest {
  decodeWire(m);
  str(m, 'run_id');
  absolute(m, 'program');
  if (m.real_program !== undefined) absolute(m, 'real_program');
  strArray(m, 'argv', false, true);
  absolute(m, 'cwd');
  int(m, 'pid');
  if (m.layer !== undefined && m.layer !== 'kernel') fail(m, '"layer" must be "kernel" when present');
  if (m.pair_run !== undefined) str(m, 'pair_run');
  const procFile = /^\/proc\/\d+\/(fd\/\d+|root\/|cwd\/|exe$)/;
  if (m.program_file !== undefined && (m.layer !== 'kernel' || typeof m.program_file !== 'string' || !procFile.test(m.program_file)))
    fail(m, '"program_file" must be a /proc/<pid>/fd, root, cwd or exe path of a kernel-layer request');
  if (m.host_pid !== undefined) int(m, 'host_pid');
  if (m.kernel_argv !== undefined && m.layer !== 'kernel') fail(m, '"kernel_argv" belongs to a kernel-layer request');
  strArray(m, 'kernel_argv', true, true);
  const env = m.env;
  if (env !== undefined && (typeof env !== 'object' || env === null || Array.isArray(env) || Object.values(env).some((v) => typeof v !== 'string')))
    fail(m, '"env" must be an object of strings');
  return m as unknown as ExecRequest;
}

export function validateExecReused(m: Envelope): ExecReused {
  str(m, 'grant');
  validateExec(m);
  return m as unknown as ExecReused;
}

export function validateStartUpEnd(m: Envelope): StartUpEnd {
  str(m, 'run_id');
  return m as unknown as StartUpEnd;
}

export function validateSessionSandbox(m: Envelope): SessionSandboxRequest {
  str(m, 'key');
  if (typeof m.own_network !== 'boolean') fail(m, '"own_network" must be a boolean');
  if (m.mounts !== undefined && !(Array.isArray(m.mounts) && m.mounts.length <= 4096 && m.mounts.every((a) => typeof a === 'string' && !a.includes('\0'))))
    fail(m, '"mounts" must be a list of strings');
  return m as unknown as SessionSandboxRequest;
}

export function validateRunFinished(m: Envelope): RunFinished {
  str(m, 'run_id');
  int(m, 'exit_status');
  if (typeof m.duration_ms !== 'number') fail(m, '"duration_ms" must be a number');
  str(m, 'stderr_tail', true);
  return m as unknown as RunFinished;
}

export function validateSessionSandboxStale(m: Envelope): SessionSandboxStale {
  for (const k of ['pid', 'mntns'] as const) if (!Number.isSafeInteger(m[k]) || (m[k] as number) <= 0) fail(m, `"${k}" must be a positive integer`);
  return m as unknown as SessionSandboxStale;
}
