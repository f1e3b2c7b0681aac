/**
 * One `shell` tool call run in `gate mcp`'s own process: no gate-sh process per call. The call
 * goes through gate-sh's one run machine (src/exec/run-call.ts) over the daemon's own plan, as the native
 * gate-sh (shims/gate-sh-native.c) does: one pre-flight round trip carrying a plan request, so the daemon
 * decides and builds the run plan with the same builders as for every gate-sh (src/exec/daemon-planner.ts);
 * this file spawns exactly that plan (the sandbox launcher, bwrap, bash) with the call's output pipes.
 * Its messages are gate-sh's, with the same exit statuses (126 when nothing ran; 2 for escalation flags the
 * daemon cannot read), written into the call's output as gate-sh writes them on its stderr.
 * Trust: runs as the caller, outside any sandbox; only the daemon's Action makes anything run, and the plan
 * is run as given, never widened. Fail closed: any error before the spawn runs nothing.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, realpathSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  type Attempt,
  daemonPlanner,
  type DaemonPlannerOptions,
  EXIT_DENIED,
  gateNative,
  runCall,
  type RunPlan,
  type StartUpEnd,
  TAIL_BYTES,
  TRUSTED_BWRAP_DIRS,
  utf8Tail,
  watchStartUp,
} from '../exec/index.js';
import { CALL_TEXTS, fill, type Pending, RUN_CALL } from '../protocol/index.js';
import { gatePaths, type GatePaths } from '../paths/index.js';

/** Scripts the native gate-sh hands to the Node gate-sh (stream path, script descriptor): so does this. */
export const IN_PROCESS_MAX_SCRIPT = RUN_CALL.nativeMaxScript;

/** Who asked a prompt (src/daemon/approver.ts PromptEvent's fields that say which run it belongs to). */
export interface PromptOwner {
  approval_id: string;
  run_id?: string;
  client_pid?: number;
}

/** A call as `shell-run.ts` drives it: the output sink, and the process group it can kill. */
export interface PlannedCall {
  /** SIGKILL the plan's process group; a call still in pre-flight runs nothing after this */
  kill(): void;
  /** the call's status: bash's (128+n for signal n), or gate-sh's own 126 / 2 */
  done: Promise<number>;
  /** 'exact' for a prompt of this call's pre-flight or run; 'maybe' for one of this process's calls that
   * names neither (a nested run inside one of them: its run id is the nested run's) */
  owns(p: PromptOwner): 'exact' | 'maybe' | false;
}

/** The call (gate-sh's arguments, the script, cwd as callDir gives it, environment, the gate-sh launcher a
 * spawned gate-sh would have been, its shims folder), and where its output goes. */
export interface PlannedCallOptions extends Omit<DaemonPlannerOptions, 'paths'> {
  /** every byte of output, both streams in arrival order */
  output(b: Buffer): void;
  /** start the daemon (what gate-sh's autostart does) */
  autostart(): Promise<void>;
}

/**
 * Whether a call can run here exactly as the native gate-sh would run it; otherwise the caller spawns
 * gate-sh, which hands these to its Node entry point before anything runs (the same split as there).
 */
export function runsInProcess(env: NodeJS.ProcessEnv, script: string): boolean {
  const force = env.GATE_SH_NODE;
  if ((force && force !== '0') || env.GATE_RUN !== undefined) return false;
  if (script.includes('\0') || Buffer.byteLength(script, 'utf8') > IN_PROCESS_MAX_SCRIPT) return false;
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (k.includes('\0') || v.includes('\0'))) return false;
  // a bubblewrap where gate-sh trusts one, as this process sees the filesystem (the daemon plans in its own view)
  return TRUSTED_BWRAP_DIRS.some((d) => {
    try {
      return statSync(join(d, 'bwrap')).isFile();
    } catch {
      return false;
    }
  });
}

/** Start one call; never throws (failures become gate-sh's messages in the output and status 126). */
export function startPlannedCall(o: PlannedCallOptions): PlannedCall {
  return new Call(o);
}

class Call implements PlannedCall {
  readonly done: Promise<number>;
  private stopped = false;
  private pid: number | undefined;
  private readonly approvals = new Set<string>();
  private readonly runs = new Set<string>();

  constructor(private readonly o: PlannedCallOptions) {
    this.done = this.main().catch((e: unknown) => {
      this.say(fill(CALL_TEXTS.internalError, (e as Error).message));
      return EXIT_DENIED;
    });
  }

  kill(): void {
    this.stopped = true;
    if (this.pid === undefined) return;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  owns(p: PromptOwner): 'exact' | 'maybe' | false {
    if (this.approvals.has(p.approval_id) || (p.run_id !== undefined && this.runs.has(p.run_id))) return 'exact';
    return p.client_pid === process.pid ? 'maybe' : false;
  }

  private say(line: string): void {
    this.o.output(Buffer.from(`${CALL_TEXTS.prefix}${line}\n`, 'utf8'));
  }

  private async main(): Promise<number> {
    const o = this.o;
    let paths: GatePaths;
    try {
      paths = gatePaths(o.env);
    } catch (e) {
      this.say((e as Error).message);
      return EXIT_DENIED;
    }
    const planner = daemonPlanner({ ...o, paths });
    return runCall<RunPlan>({
      paths,
      planner,
      runner: { run: (plan, r) => this.run(plan, r.keepTail, r.startUp) },
      say: (l) => this.say(l),
      // no daemon yet: start it as gate-sh does (never from inside a gated run: runsInProcess sent those away)
      autostart: () => o.autostart(),
      onPending: (p: Pending) => {
        for (const id of p.approval_ids ?? []) this.approvals.add(id);
      },
      onRun: (id) => this.runs.add(id),
      stopped: () => this.stopped,
    });
  }

  /** Spawn a plan and wait for it; throws (nothing ran) when it could not start. */
  private run(pl: RunPlan, keepTail: boolean, startUp: StartUpEnd): Promise<Attempt> {
    // killed (timeout, cancel) while the pre-flight was in flight: nothing runs; the run is closed as killed
    if (this.stopped) return Promise.resolve({ status: 128 + constants.signals.SIGKILL, ms: 0, tail: '' });
    const started = nowMs();
    const su = pl.startUp;
    let ready: [number, number] | undefined;
    let go: [number, number] | undefined;
    try {
      if (su) (ready = gateNative().pipe()), (go = gateNative().pipe());
    } catch (e) {
      throw new Error(fill(CALL_TEXTS.cannotStart, pl.program, (e as Error).message));
    }
    const extra: number[] = [];
    if (su && ready && go) for (let fd = 3; fd <= Math.max(su.ready, su.go); fd++) extra.push(fd === su.ready ? ready[1] : fd === su.go ? go[0] : -1);
    let child: Launched;
    try {
      // its own session and process group: bwrap away from any terminal's signals, and the timeout or
      // a cancel kills everything the run started
      child = launch(pl.program, pl.args, pl.env, pl.cwd, extra);
    } catch (e) {
      for (const fd of [...(ready ?? []), ...(go ?? [])]) closeSync(fd);
      throw new Error(fill(CALL_TEXTS.cannotStart, pl.program, (e as Error).message));
    }
    this.pid = child.pid;
    if (this.stopped) this.kill();
    if (su && ready && go) {
      closeSync(ready[1]);
      closeSync(go[0]);
      watchStartUp(ready[0], go[1], startUp.end, startUp.onError);
    }
    let tail = Buffer.alloc(0);
    child.stdout.on('data', (d: Buffer) => this.o.output(d));
    child.stderr.on('data', (d: Buffer) => {
      this.o.output(d);
      if (!keepTail) return;
      tail = tail.length + d.length > TAIL_BYTES * 2 ? Buffer.concat([tail, d]).subarray(-TAIL_BYTES) : Buffer.concat([tail, d]);
    });
    return child.closed.then(
      (status) => ({ status, ms: nowMs() - started, tail: utf8Tail(tail) }),
      (e: Error) => {
        throw new Error(fill(CALL_TEXTS.cannotStart, pl.program, e.message));
      },
    );
  }
}

/** A started plan: its pid, its output pipes, and its status once it has ended and both pipes are closed
 * (bash's: 128+n for signal n); `closed` rejects when it could not start after all. */
export interface Launched {
  pid: number | undefined;
  stdout: Readable;
  stderr: Readable;
  closed: Promise<number>;
}

/**
 * Start a plan's program: stdin /dev/null, stdout and stderr pipes, extra[i] (a descriptor of ours, or -1:
 * none) as its descriptor 3 + i, a session of its own. Through the native addon's posix_spawn where it has
 * one: Node's spawn forks this whole process and waits for the exec, 1-3 ms per call in a server of this
 * size, blocking every other call meanwhile (docs/startup.md); else Node's spawn (also with GATE_NODE_SPAWN=1 in
 * the server's environment, for A/B measurements). Throws when nothing started.
 */
export function launch(program: string, args: string[], env: Record<string, string>, cwd: string, extra: number[]): Launched {
  const native = gateNative();
  if (native.spawn && program.startsWith('/') && process.env.GATE_NODE_SPAWN !== '1' && native.spawnAvailable()) {
    const [outR, outW] = native.pipe();
    const [errR, errW] = native.pipe();
    let ended: (v: { code: number | null; signal: number }) => void = () => {};
    const exited = new Promise<{ code: number | null; signal: number }>((r) => (ended = r));
    let pid: number;
    try {
      const envList = Object.entries(env).map(([k, v]) => `${k}=${v}`);
      pid = native.spawn(program, [program, ...args], envList, cwd, [-1, outW, errW, ...extra], (code, signal) => ended({ code, signal }));
    } catch (e) {
      for (const fd of [outR, errR]) closeSync(fd);
      throw e;
    } finally {
      for (const fd of [outW, errW]) closeSync(fd);
    }
    const stdout = new Socket({ fd: outR, readable: true, writable: false });
    const stderr = new Socket({ fd: errR, readable: true, writable: false });
    const shut = (s: Socket): Promise<void> => new Promise((r) => s.once('close', () => r()));
    const closed = Promise.all([exited, shut(stdout), shut(stderr)]).then(([x]) => x.code ?? 128 + x.signal);
    return { pid, stdout, stderr, closed };
  }
  const stdio: (string | number)[] = ['ignore', 'pipe', 'pipe', ...extra.map((fd) => (fd < 0 ? 'ignore' : fd))];
  const child = spawn(program, args, { stdio: stdio as StdioOptions, env, cwd, argv0: program, detached: true });
  const closed = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? (constants.signals as Record<string, number>)[signal] ?? 0 : 0)));
  });
  return { pid: child.pid, stdout: child.stdout as Readable, stderr: child.stderr as Readable, closed };
}

/** The call's working directory as a process started there reads it (getcwd: symlinks resolved); throws
 * when no process could start there, before anything is asked. */
export function callDir(workdir: string): string {
  const dir = realpathSync.native(workdir);
  if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, chdir '${workdir}'`), { code: 'ENOTDIR' });
  return dir;
}

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
