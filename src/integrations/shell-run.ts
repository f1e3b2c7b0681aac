/**
 * One `shell` tool call: `gate-sh -c|-lc <command>` in `workdir`, through the full gate (pre-flight, daemon,
 * sandbox, exec gate): run in this process from the daemon's plan (shell-plan.ts), or, for what the native
 * gate-sh would hand to Node (and when a gate-sh launcher is given), by spawning gate-sh. stdout and stderr
 * are captured together in arrival order; the timeout kills the whole process group. The clock can be
 * paused while a human is being asked (Codex pauses its stopwatch for an elicitation), so a slow answer is
 * not a timeout.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callDir, runsInProcess, startPlannedCall, type PromptOwner } from './shell-plan.js';
import type { SandboxPolicy } from '../sandbox/index.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
/** bin/gate-sh of this installation (dist/src/integrations/ → ../../..): the native entry point, no Node start. */
export const GATE_SH_BIN = join(ROOT, 'bin', 'gate-sh');
/** the shims folder a gate-sh of this installation names in its plan request (libgate.so, the launcher) */
const SHIMS_DIR = join(ROOT, 'shims');
/** Codex's default exec timeout. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Output kept per call: the first and last halves of this many bytes. */
export const MAX_OUTPUT_BYTES = 1 << 20;
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ShellParams {
  command: string;
  workdir: string;
  timeout_ms?: number;
  /** -lc instead of -c (default true) */
  login?: boolean;
  /** Codex's shell-tool escalation request: gate-sh's --escalate / --with-permissions / --justification */
  sandbox_permissions?: 'use_default' | 'require_escalated' | 'with_additional_permissions';
  additional_permissions?: { network?: boolean; file_system?: { read?: string[]; write?: string[] } };
  justification?: string;
}

/** The gate-sh flags for what the call asks of the sandbox (gate-sh validates the profile itself). */
export function escalationFlags(p: ShellParams): string[] {
  const why = p.justification !== undefined ? ['--justification', p.justification] : [];
  if (p.sandbox_permissions === 'require_escalated') return ['--escalate', ...why];
  if (p.sandbox_permissions === 'with_additional_permissions') {
    if (!p.additional_permissions) throw new ShellParamsError('with_additional_permissions needs additional_permissions');
    return ['--with-permissions', JSON.stringify(p.additional_permissions), ...why];
  }
  if (p.additional_permissions) throw new ShellParamsError('additional_permissions goes with sandbox_permissions "with_additional_permissions"');
  return why.length ? ['--justification', p.justification as string] : [];
}

/** Codex's ExecResult (`duration` as serde serialises a Rust Duration). */
export interface ShellResult {
  exit_code: number;
  output: string;
  duration: { secs: number; nanos: number };
  timed_out: boolean;
}

export interface RunningShell {
  /** whether a prompt belongs to this call: 'exact' (its pre-flight's approval, its run, the gate-sh it
   * spawned), 'maybe' (a run of this process that names neither: a nested run in an in-process call) */
  owns(p: PromptOwner): 'exact' | 'maybe' | false;
  /** stop counting time towards the timeout (nested calls are counted) */
  pause(): void;
  resume(): void;
  /** kill the process group now (the server is going away) */
  kill(): void;
  result: Promise<ShellResult>;
}

export interface ShellRunOptions {
  env: NodeJS.ProcessEnv;
  /** a gate-sh to spawn per call instead of running the call in this process */
  gateSh?: string;
  /** start the daemon when none answers (in-process calls; a spawned gate-sh autostarts on its own) */
  autostart?: () => Promise<void>;
  /** the call's sandbox at most (the host's own: `gate-sh --sandbox`) */
  sandbox?: SandboxPolicy;
}

export class ShellParamsError extends Error {}

export function checkShellParams(p: ShellParams): void {
  if (typeof p.command !== 'string') throw new ShellParamsError('command must be a string');
  if (typeof p.workdir !== 'string' || !p.workdir.startsWith('/'))
    throw new ShellParamsError(`workdir must be an absolute path, not ${JSON.stringify(p.workdir)}`);
  if (p.timeout_ms !== undefined && (!Number.isInteger(p.timeout_ms) || p.timeout_ms < 0))
    throw new ShellParamsError('timeout_ms must be a non-negative integer');
}

/** What runs a call: gate-sh's work in this process (shell-plan.ts), or a spawned gate-sh. */
interface Engine {
  kill(): void;
  done: Promise<number>;
  owns(p: PromptOwner): 'exact' | 'maybe' | false;
}

export function startShell(p: ShellParams, opts: ShellRunOptions): RunningShell {
  checkShellParams(p);
  const started = process.hrtime.bigint();
  const flags = escalationFlags(p);
  const argv = [...flags, ...(opts.sandbox ? ['--sandbox', JSON.stringify(opts.sandbox)] : []), p.login === false ? '-c' : '-lc', p.command];
  const out = new OutputBuffer(MAX_OUTPUT_BYTES);
  // the call in this process, as the native gate-sh would run it; what that hands to Node, a spawned gate-sh
  const inProcess = opts.gateSh === undefined && runsInProcess(opts.env, p.command);
  let engine: Engine;
  if (inProcess) {
    let cwd: string;
    try {
      cwd = callDir(p.workdir);
    } catch (e) {
      throw new Error(`cannot start gate-sh (${GATE_SH_BIN}) in ${p.workdir}: ${(e as Error).message}`);
    }
    engine = startPlannedCall({
      argv,
      script: p.command,
      login: p.login !== false,
      cwd,
      env: opts.env,
      gateSh: GATE_SH_BIN,
      shimsDir: SHIMS_DIR,
      output: (b) => out.push(b),
      autostart: opts.autostart ?? (async () => (await import('../client/autostart.js')).ensureDaemon(opts.env)),
    });
  } else engine = spawnGateSh(opts.gateSh ?? GATE_SH_BIN, argv, p.workdir, opts.env, out);

  let timedOut = false;
  let ended = false;
  let remaining = p.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  let armedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let pauses = 0;
  const arm = (): void => {
    armedAt = Date.now();
    // setTimeout fires at once above 2^31-1 ms; a longer timeout is as good as none
    if (remaining > MAX_TIMER_MS) return;
    timer = setTimeout(() => {
      timedOut = true;
      engine.kill();
    }, remaining);
  };
  arm();

  const result = engine.done.then(
    (status) => {
      ended = true;
      clearTimeout(timer);
      if (!timedOut) engine.kill(); // background jobs the script left behind
      const ns = process.hrtime.bigint() - started;
      return {
        exit_code: status,
        output: out.text(),
        duration: { secs: Number(ns / 1_000_000_000n), nanos: Number(ns % 1_000_000_000n) },
        timed_out: timedOut,
      };
    },
    (e: Error) => {
      ended = true;
      clearTimeout(timer);
      throw e;
    },
  );
  return {
    owns: (q) => engine.owns(q),
    pause() {
      if (pauses++ > 0 || timedOut) return;
      clearTimeout(timer);
      remaining = Math.max(0, remaining - (Date.now() - armedAt));
    },
    resume() {
      if (pauses === 0 || --pauses > 0 || timedOut || ended) return;
      arm();
    },
    kill: () => engine.kill(),
    result,
  };
}

/** A gate-sh process per call (its own process group: the timeout kills everything it started). */
function spawnGateSh(gateSh: string, argv: string[], workdir: string, env: NodeJS.ProcessEnv, out: OutputBuffer): Engine {
  const child = spawn(gateSh, argv, { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => out.push(d));
  const done = new Promise<number>((resolveDone, reject) => {
    child.on('error', (e) => reject(new Error(`cannot start gate-sh (${gateSh}) in ${workdir}: ${e.message}`)));
    child.on('close', (code, signal) => resolveDone(code ?? 128 + signalNumber(signal)));
  });
  return {
    kill() {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    },
    done,
    owns: (q) => (child.pid !== undefined && q.client_pid === child.pid ? 'exact' : false),
  };
}

/** A signalled exit reads as bash would report it: 128 + the signal number. */
function signalNumber(sig: NodeJS.Signals | null): number {
  return sig ? (constants.signals as Record<string, number>)[sig] ?? 0 : 0;
}

/** Keeps the first and last halves of a bounded byte budget; decodes as UTF-8 once at the end. */
class OutputBuffer {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  private dropped = 0;

  constructor(private readonly max: number) {}

  push(b: Buffer): void {
    const half = this.max >> 1;
    if (this.headLen < half) {
      const take = b.subarray(0, half - this.headLen);
      this.head.push(take);
      this.headLen += take.length;
      b = b.subarray(take.length);
    }
    if (!b.length) return;
    this.tail.push(b);
    this.tailLen += b.length;
    while (this.tailLen > half) {
      const first = this.tail[0];
      const excess = this.tailLen - half;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLen -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailLen -= excess;
        this.dropped += excess;
      }
    }
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    return this.dropped ? `${head}\n[... ${this.dropped} bytes of output omitted ...]\n${tail}` : head + tail;
  }
}
