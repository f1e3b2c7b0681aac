/**
 * One `shell` tool call run in `gate mcp`'s own process (issue 19): no gate-sh process per call. The server
 * does what the native gate-sh (shims/gate-sh-native.c) does for it: one pre-flight round trip carrying a
 * plan request, so the daemon decides and builds the run plan with the same builders as for every gate-sh
 * (src/exec/client-plan.ts); then it spawns exactly that plan (the sandbox launcher, bwrap, bash) with the
 * call's output pipes, ends a start-up phase when bash says so, reports run-finished, and offers the
 * on-failure rerun as the plan says. Its own messages are gate-sh's, with the same exit statuses (126 when
 * nothing ran; 2 for escalation flags the daemon cannot read), written into the call's output as gate-sh
 * wrote them on its stderr.
 * Trust: runs as the caller, outside any sandbox; only the daemon's answer makes anything run, and the plan
 * is run as given, never widened. Fail closed: any error before the spawn runs nothing.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { PlanRequest, WirePlan } from '../exec/client-plan.js';
import { gateNative } from '../exec/native.js';
import { TRUSTED_BWRAP_DIRS } from '../exec/sandbox-run.js';
import { watchStartUp } from '../exec/start-up-gate.js';
import { RequestClient, RequestError, type Outgoing } from '../protocol/client.js';
import { newId } from '../protocol/codec.js';
import type { Ack, Pending, PreflightReply } from '../protocol/messages.js';
import { gatePaths, type GatePaths } from '../protocol/paths.js';

const EXIT_DENIED = 126;
/** What the native gate-sh keeps of a failed turn-sandbox attempt's stderr for the daemon to read. */
const TAIL_BYTES = 4096;
/** Scripts the native gate-sh hands to the Node gate-sh (stream path, script descriptor): so does this. */
export const IN_PROCESS_MAX_SCRIPT = 32 * 1024;

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

export interface PlannedCallOptions {
  /** gate-sh's arguments: escalation flags, -c|-lc, the script */
  argv: string[];
  script: string;
  login: boolean;
  /** the working directory as getcwd() gives it in there (symlinks resolved: callDir) */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** the launcher a spawned gate-sh would have been: its path is bash's $0, its folder the shims' */
  gateSh: string;
  shimsDir: string;
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
  private client: RequestClient | undefined;

  constructor(private readonly o: PlannedCallOptions) {
    this.done = this.main().catch((e: unknown) => {
      this.say(`internal error: ${(e as Error).message}; nothing ran`);
      return EXIT_DENIED;
    }).finally(() => this.client?.close());
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
    this.o.output(Buffer.from(`gate-sh: ${line}\n`, 'utf8'));
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
    const cwd = o.cwd;
    const env = o.env;
    const envList = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
    const plan: PlanRequest = { argv: o.argv, argv0: o.gateSh, env: envList, fds: [], shims: o.shimsDir };
    const preflight = {
      type: 'preflight',
      id: newId(),
      shell: 'bash',
      flag: o.login ? '-lc' : '-c',
      script: o.script,
      cwd,
      pid: process.pid,
      sandbox_permissions: 'use_default',
      plan,
    } as Outgoing & { plan: PlanRequest };
    const withKey = (): void => {
      const key = startUpKey(paths);
      if (key !== undefined) plan.start_up_key = key;
      else delete plan.start_up_key;
    };
    withKey();

    let reply: PreflightReply;
    try {
      try {
        this.client = RequestClient.open(paths);
        reply = await this.ask(preflight);
      } catch (e) {
        if (!(e instanceof RequestError) || e.kind !== 'not-running' || this.stopped) throw e;
        // no daemon yet: start it as gate-sh does (never from inside a gated run: runsInProcess sent those away)
        try {
          await o.autostart();
        } catch (err) {
          throw new RequestError('not-running', (err as Error).message);
        }
        this.client?.close();
        this.client = RequestClient.open(paths);
        withKey(); // the new daemon wrote a new start-up key
        reply = await this.ask(preflight);
      }
    } catch (e) {
      const msg = (e as Error).message;
      // escalation flags the daemon could not read: nothing was decided; gate-sh says what is wrong (exit 2)
      const malformed = `the gate daemon refused the request (malformed): preflight request ${preflight.id}: `;
      if (e instanceof RequestError && msg.startsWith(malformed) && o.argv.length > 2) {
        this.say(`${msg.slice(malformed.length)}; nothing ran`);
        return 2;
      }
      this.say(`${msg}; nothing ran`);
      return EXIT_DENIED;
    }
    if (reply.type !== 'preflight' || !reply.action || typeof reply.run_id !== 'string') {
      this.say(`protocol error: unexpected reply '${String(reply.type)}' to preflight; nothing ran. Check 'gate status'`);
      return EXIT_DENIED;
    }
    this.runs.add(reply.run_id);
    const client = this.client as RequestClient;
    const pl = reply.plan;
    if (!pl) return this.noPlan();
    if (pl.denials?.length) {
      for (const l of pl.denials) this.say(l);
      return EXIT_DENIED;
    }
    if (pl.error !== undefined) {
      this.say(`${pl.error}; nothing ran`);
      return EXIT_DENIED;
    }
    if (!runnable(pl)) return this.noPlan();
    const first = await this.run(pl, reply.run_id, pl.rerun === true);
    if (first === undefined) return EXIT_DENIED;
    const ask = pl.rerun === true && first.status !== 127 && (first.status !== 0 || pl.rerun_any_status === true);
    const finished = { type: 'run-finished', run_id: reply.run_id, exit_status: first.status, duration_ms: Math.round(first.ms) };
    if (!ask) {
      client.notify(finished);
      return first.status;
    }
    // a failed turn-sandbox attempt: the daemon reads its stderr for a sandbox denial (the on-failure rerun)
    let why: string | undefined;
    let justification: string | undefined;
    try {
      const ack = await client.request<Ack>({ ...finished, stderr_tail: first.tail }, { timeoutMs: 1000, retries: 9 });
      if (typeof ack.info?.why === 'string' && ack.info.why) ({ why, justification } = ack.info as { why: string; justification?: string });
    } catch {
      return first.status;
    }
    if (why === undefined || this.stopped) return first.status;
    let second: PreflightReply;
    try {
      const { start_up_key: _key, ...planNoKey } = plan;
      second = await this.ask({
        ...preflight,
        id: newId(),
        sandbox_permissions: 'require_escalated',
        justification: justification ?? '',
        plan: { ...planNoKey, rerun_why: why },
      });
      if (second.type !== 'preflight' || !second.action) throw new Error(`unexpected reply '${String(second.type)}'`);
    } catch (e) {
      this.say(`the sandboxed run failed (${why}); could not ask to rerun it: ${(e as Error).message}`);
      return first.status;
    }
    this.runs.add(second.run_id);
    const p2 = second.plan;
    if (p2?.error !== undefined) {
      this.say(`${p2.error}; nothing ran`);
      return EXIT_DENIED;
    }
    if (p2?.rerun_of?.notice) this.say(p2.rerun_of.notice);
    if (!p2?.rerun_of?.rerun) return first.status;
    if (!runnable(p2)) return this.noPlan();
    const again = await this.run(p2, second.run_id, false);
    if (again === undefined) return EXIT_DENIED;
    client.notify({ type: 'run-finished', run_id: second.run_id, exit_status: again.status, duration_ms: Math.round(again.ms) });
    return again.status;
  }

  private noPlan(): number {
    this.say('protocol error from the gate daemon: no run plan in the reply; nothing ran');
    return EXIT_DENIED;
  }

  /** A pre-flight, waited for as gate-sh waits (resends, heartbeats while a person is asked, the notice). */
  private async ask(msg: Outgoing): Promise<PreflightReply> {
    let timer: NodeJS.Timeout | undefined;
    let told = false;
    const onPending = (p: Pending): void => {
      for (const id of p.approval_ids ?? []) this.approvals.add(id);
      if (told || timer) return;
      timer = setTimeout(() => {
        told = true;
        this.say("waiting for approval (answer with 'gate approve')...");
      }, 300);
    };
    try {
      return await (this.client as RequestClient).request<PreflightReply>(msg, { timeoutMs: 1000, retries: 9, onPending });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Spawn a plan and wait for it; undefined (said why) when it could not start or the call was stopped. */
  private run(pl: WirePlan, runId: string, keepTail: boolean): Promise<{ status: number; ms: number; tail: string } | undefined> {
    if (this.stopped) {
      // killed (timeout, cancel) while the pre-flight was in flight: nothing runs; the run is closed as killed
      this.client?.notify({ type: 'run-finished', run_id: runId, exit_status: 128 + constants.signals.SIGKILL, duration_ms: 0 });
      return Promise.resolve({ status: 128 + constants.signals.SIGKILL, ms: 0, tail: '' });
    }
    const started = nowMs();
    const su = pl.start_up && pl.start_up.ready > 2 && pl.start_up.go > 2 ? pl.start_up : undefined;
    let ready: [number, number] | undefined;
    let go: [number, number] | undefined;
    try {
      if (su) (ready = gateNative().pipe()), (go = gateNative().pipe());
    } catch (e) {
      this.say(`cannot start ${pl.program}: ${(e as Error).message}; nothing ran`);
      return Promise.resolve(undefined);
    }
    const extra: number[] = [];
    if (su && ready && go) for (let fd = 3; fd <= Math.max(su.ready, su.go); fd++) extra.push(fd === su.ready ? ready[1] : fd === su.go ? go[0] : -1);
    const program = pl.program as string;
    let child: Launched;
    try {
      // its own session and process group: bwrap away from any terminal's signals, and the timeout or
      // a cancel kills everything the run started
      child = launch(program, pl.args as string[], planEnv(this.o.env, pl), pl.cwd as string, extra);
    } catch (e) {
      this.say(`cannot start ${program}: ${(e as Error).message}; nothing ran`);
      for (const fd of [...(ready ?? []), ...(go ?? [])]) closeSync(fd);
      return Promise.resolve(undefined);
    }
    this.pid = child.pid;
    if (this.stopped) this.kill();
    if (su && ready && go) {
      closeSync(ready[1]);
      closeSync(go[0]);
      const client = this.client as RequestClient;
      watchStartUp(
        ready[0],
        go[1],
        async () => void (await client.request({ type: 'start-up-end', run_id: runId }, { timeoutMs: 1000, retries: 9 })),
        (e) => this.say(`the start-up phase could not be ended (${e.message}); the script did not run`),
      );
    }
    let tail = Buffer.alloc(0);
    child.stdout.on('data', (d: Buffer) => this.o.output(d));
    child.stderr.on('data', (d: Buffer) => {
      this.o.output(d);
      if (!keepTail) return;
      tail = tail.length + d.length > TAIL_BYTES * 2 ? Buffer.concat([tail, d]).subarray(-TAIL_BYTES) : Buffer.concat([tail, d]);
    });
    return child.closed.then(
      (status) => ({ status, ms: nowMs() - started, tail: utf8Tail(tail.subarray(-TAIL_BYTES)) }),
      (e: Error) => {
        this.say(`cannot start ${program}: ${e.message}; nothing ran`);
        return undefined;
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

function runnable(pl: WirePlan): boolean {
  return !!pl.program && !!pl.cwd && !!pl.args?.length && !pl.script_fd;
}

/** The call's environment with the plan's changes: a changed name keeps its place, new names come last. */
function planEnv(env: NodeJS.ProcessEnv, pl: WirePlan): Record<string, string> {
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
    const k = readFileSync(join(paths.approvalDir, 'start-up.key'), 'utf8').trim();
    return k || undefined;
  } catch {
    return undefined;
  }
}

/** The last bytes of stderr as text from a character boundary (the daemon reads it as a JSON string). */
function utf8Tail(b: Buffer): string {
  let k = 0;
  while (k < b.length && k < 4 && (b[k] & 0xc0) === 0x80) k++;
  return b.subarray(k).toString('utf8');
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
