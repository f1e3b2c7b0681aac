/**
 * One call of gate-sh, start to end, written once: pre-flight (starting the daemon when none
 * runs) → the plan → the run → run-finished → the on-failure rerun (a failed turn-sandbox attempt whose
 * stderr tail the daemon reads as a sandbox denial is asked about as an escalation, and rerun as the answer
 * says). The Node gate-sh (src/cli/gate-sh.ts) and `gate mcp` (src/integrations/shell-plan.ts) run every
 * call through `runCall`; the native gate-sh (shims/gate-sh-native.c) is this sequence over the same daemon
 * plan, in C, with these texts, limits and waits from shims/gate-shared.h (src/protocol/shared-with-c.ts).
 * What differs between the entry points sits behind two ports: the Planner (where the plan comes from:
 * the daemon's reply, or built here from it) and the Runner (how a plan runs: the caller's own stdio, a
 * PTY, or the call's output pipes). The daemon alone decides what a failure was (run-finished's ack) and
 * what its answer to the rerun means, for every entry point.
 * Not pure: request-channel round trips through the client it opens; it starts no process itself.
 * Trust: runs as the caller, outside any sandbox; only the daemon's Action makes anything run. Fail closed:
 * any failure before a run runs nothing, exit 126.
 */
import { type Ack, type Action, CALL_TEXTS, fill, newId, type Pending, type PreflightReply, REQUEST_WAITS, RUN_CALL } from '../protocol/index.js';
import { type Outgoing, RequestClient, RequestError } from '../transport/index.js';
import type { GatePaths } from '../paths/index.js';

export const EXIT_DENIED = RUN_CALL.exitDenied;
/** How long a run's stderr tail is for the daemon's denial check. */
export const TAIL_BYTES = RUN_CALL.stderrTailBytes;
/** Every request of a call: the first resend after a second (same id: idempotent), which also notices a
 * dead daemon; later waits double up to 4 s; about 35 s in all before 'not answering'. */
export const CALL_WAITS = { timeoutMs: REQUEST_WAITS.firstMs, retries: REQUEST_WAITS.retries } as const;

/** One run of a plan: bash's status (128+n for signal n), its duration, and its stderr's tail when kept. */
export interface Attempt {
  status: number;
  ms: number;
  tail?: string;
}

/** A pre-flight reply that names a run and an action (checked before a planner sees it). */
export type CallReply = PreflightReply & { action: Action; run_id: string };

/** What the first reply means. `rerun`: a turn-sandbox attempt, its stderr tail kept for the daemon's denial
 * check after a failure; `anyStatus`: after a 0 too (its sandbox was stricter than the turn's). */
export type FirstStep<P> =
  | { kind: 'denied'; lines: string[] }
  | { kind: 'refused'; error: string }
  | { kind: 'none' }
  | { kind: 'run'; plan: P; rerun: boolean; anyStatus: boolean; notice?: string };

/** What the answer to the rerun's question means: the notice first, then an error (nothing runs), a rerun
 * (plan undefined: no runnable plan in the reply), or the first attempt stands. */
export interface RerunStep<P> {
  notice?: string;
  error?: string;
  rerun: boolean;
  plan?: P;
}

export interface Planner<P> {
  /** the first pre-flight */
  readonly request: Outgoing;
  /** the call's escalation flags are read by the daemon: its `malformed` refusal of them is gate-sh's exit 2 */
  readonly flagsAtDaemon: boolean;
  /** a daemon was just started: what the new one changed in the request (its start-up key) */
  restarted(): void;
  first(reply: CallReply, client: RequestClient): Promise<FirstStep<P>>;
  /** the rerun's pre-flight: the same script, an escalation asked with the denial as justification */
  rerunRequest(why: string, justification: string): Outgoing;
  second(reply: PreflightReply & { action: Action }, why: string): RerunStep<P>;
}

/** Ends a run's start-up phase at the daemon (start-up-end), or says why it could not. */
export interface StartUpEnd {
  end(): Promise<void>;
  onError(e: Error): void;
}

export interface Runner<P> {
  /** Run a plan and wait for it (keepTail: keep its stderr's last TAIL_BYTES; again: the rerun). Throws
   * when it could not start: nothing ran. */
  run(plan: P, o: { keepTail: boolean; again: boolean; startUp: StartUpEnd }): Promise<Attempt>;
}

export interface CallPorts<P> {
  paths: GatePaths;
  planner: Planner<P>;
  runner: Runner<P>;
  /** one line for the caller (prefixed `gate-sh: ` by the caller) */
  say(line: string): void;
  /** start the daemon (gate-sh's autostart); throws why it could not */
  autostart(): Promise<void>;
  /** a person is being asked (gate mcp matches prompts to its calls by these ids) */
  onPending?(p: Pending): void;
  /** a run id of this call */
  onRun?(runId: string): void;
  /** the call was stopped (gate mcp's timeout or cancel): no daemon is started and no rerun asked */
  stopped?(): boolean;
}

/** A pre-flight's own fields: the script as `bash -c|-lc` runs it, where, and who asks. */
export function preflightOf(login: boolean, script: string, cwd: string): Outgoing {
  return { type: 'preflight', shell: 'bash', flag: login ? '-lc' : '-c', script, cwd, pid: process.pid };
}

/** The call's status: bash's, or 126 when nothing ran (2 for escalation flags the daemon cannot read). */
export async function runCall<P>(c: CallPorts<P>): Promise<number> {
  let client: RequestClient | undefined;
  try {
    const first = await preflight(c, (k) => (client = k));
    if (typeof first === 'number') return first;
    return await afterPreflight(c, client as RequestClient, first);
  } finally {
    client?.close();
  }
}

/** State 1, pre-flight: the reply, or the status when nothing may run. */
async function preflight<P>(c: CallPorts<P>, opened: (k: RequestClient) => void): Promise<CallReply | number> {
  const req = c.planner.request;
  req.id ??= newId();
  let reply: PreflightReply;
  try {
    let client: RequestClient | undefined;
    try {
      client = RequestClient.open(c.paths);
      opened(client);
      reply = await ask(c, client, req);
    } catch (e) {
      if (!(e instanceof RequestError) || e.kind !== 'not-running' || c.stopped?.()) throw e;
      try {
        await c.autostart();
      } catch (err) {
        throw err instanceof RequestError ? err : new RequestError('not-running', (err as Error).message);
      }
      client?.close();
      client = RequestClient.open(c.paths);
      opened(client);
      c.planner.restarted();
      reply = await ask(c, client, req);
    }
  } catch (e) {
    const msg = (e as Error).message;
    // escalation flags the daemon could not read: nothing was decided; gate-sh says what is wrong (exit 2)
    const malformed = `${fill(CALL_TEXTS.refusedRequest, 'malformed', '')}preflight request ${req.id}: `;
    if (e instanceof RequestError && c.planner.flagsAtDaemon && msg.startsWith(malformed)) {
      c.say(fill(CALL_TEXTS.nothingRan, msg.slice(malformed.length)));
      return 2;
    }
    c.say(fill(CALL_TEXTS.nothingRan, msg));
    return EXIT_DENIED;
  }
  if (reply.type !== 'preflight' || !reply.action || typeof reply.run_id !== 'string') {
    c.say(fill(CALL_TEXTS.unexpectedReply, String(reply.type)));
    return EXIT_DENIED;
  }
  return reply as CallReply;
}

/** States 2 to 5: the plan, the run, run-finished, and the rerun when the daemon reads a denial. */
async function afterPreflight<P>(c: CallPorts<P>, client: RequestClient, reply: CallReply): Promise<number> {
  c.onRun?.(reply.run_id);
  const step = await c.planner.first(reply, client);
  if (step.kind === 'denied') {
    for (const l of step.lines) c.say(l);
    return EXIT_DENIED;
  }
  if (step.kind === 'refused') return refuse(c, step.error);
  if (step.kind === 'none') return noPlan(c);
  if (step.notice !== undefined) c.say(step.notice);
  const first = await attempt(c, client, reply.run_id, step.plan, step.rerun, false);
  if (first === undefined) return EXIT_DENIED;
  const finished = { type: 'run-finished', run_id: reply.run_id, exit_status: first.status, duration_ms: Math.round(first.ms) };
  // 127 is "not found" and 0 success, never the sandbox's doing (but after a 0 in a sandbox stricter than the turn's)
  const askDaemon = step.rerun && first.status !== 127 && (first.status !== 0 || step.anyStatus);
  if (!askDaemon) {
    client.notify(finished);
    return first.status;
  }
  // the daemon reads the tail for a sandbox denial (src/exec/sandbox-denial.ts) and says why
  let why: string | undefined;
  let justification = '';
  try {
    const ack = await client.request<Ack>({ ...finished, stderr_tail: first.tail ?? '' }, CALL_WAITS);
    if (typeof ack.info?.why === 'string' && ack.info.why) ({ why, justification = '' } = ack.info as { why: string; justification?: string });
  } catch {
    return first.status;
  }
  if (why === undefined || c.stopped?.()) return first.status;
  return rerun(c, client, first.status, why, justification);
}

/** State 5, the rerun: ask, then run again as the answer says (or keep the first attempt's status). */
async function rerun<P>(c: CallPorts<P>, client: RequestClient, firstStatus: number, why: string, justification: string): Promise<number> {
  let second: PreflightReply;
  try {
    second = await ask(c, client, { ...c.planner.rerunRequest(why, justification), id: newId() });
    if (second.type !== 'preflight' || !second.action) throw new Error(fill(CALL_TEXTS.unexpectedRerunReply, String(second.type)));
  } catch (e) {
    c.say(fill(CALL_TEXTS.rerunNotAsked, why, (e as Error).message));
    return firstStatus;
  }
  c.onRun?.(second.run_id);
  const step = c.planner.second(second as PreflightReply & { action: Action }, why);
  if (step.notice) c.say(step.notice);
  if (step.error !== undefined) return refuse(c, step.error);
  if (!step.rerun) return firstStatus;
  if (step.plan === undefined) return noPlan(c);
  const again = await attempt(c, client, second.run_id, step.plan, false, true);
  if (again === undefined) return EXIT_DENIED;
  client.notify({ type: 'run-finished', run_id: second.run_id, exit_status: again.status, duration_ms: Math.round(again.ms) });
  return again.status;
}

/** Run one plan; undefined (said why) when it could not start. */
async function attempt<P>(c: CallPorts<P>, client: RequestClient, runId: string, plan: P, keepTail: boolean, again: boolean): Promise<Attempt | undefined> {
  const startUp: StartUpEnd = {
    end: async () => void (await client.request({ type: 'start-up-end', run_id: runId }, CALL_WAITS)),
    onError: (e) => c.say(fill(CALL_TEXTS.startUpNotEnded, e.message)),
  };
  try {
    return await c.runner.run(plan, { keepTail, again, startUp });
  } catch (e) {
    c.say(fill(CALL_TEXTS.nothingRan, (e as Error).message));
    return undefined;
  }
}

/** A pre-flight, waited for with the call's waits; "waiting for approval" once, when the wait is real (a
 * denial with no approver is instant). */
async function ask<P>(c: CallPorts<P>, client: RequestClient, msg: Outgoing): Promise<PreflightReply> {
  let timer: NodeJS.Timeout | undefined;
  let told = false;
  const onPending = (p: Pending): void => {
    c.onPending?.(p);
    if (told || timer) return;
    timer = setTimeout(() => {
      told = true;
      c.say(CALL_TEXTS.waiting);
    }, RUN_CALL.noticeDelayMs);
  };
  try {
    return await client.request<PreflightReply>(msg, { ...CALL_WAITS, onPending });
  } finally {
    clearTimeout(timer);
  }
}

function refuse<P>(c: CallPorts<P>, error: string): number {
  c.say(fill(CALL_TEXTS.nothingRan, error));
  return EXIT_DENIED;
}

function noPlan<P>(c: CallPorts<P>): number {
  c.say(CALL_TEXTS.noPlan);
  return EXIT_DENIED;
}

/** The last bytes of a stderr as text from a character boundary (the daemon reads it as a JSON string). */
export function utf8Tail(b: Buffer): string {
  const t = b.subarray(-TAIL_BYTES);
  let k = 0;
  while (k < t.length && k < 4 && (t[k] & 0xc0) === 0x80) k++;
  return t.subarray(k).toString('utf8');
}
