/**
 * Run a RunPlan: the child inherits stdin, stdout, stderr and any other descriptor gate-sh inherited (not
 * copied: byte-exact, full throughput, a terminal stays a terminal), signals are forwarded, and the result
 * is bash's exit status (128+n for signal n). A large script reaches bash on its own descriptor.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readlinkSync, readSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunPlan } from './plan.js';
import { exitStatus, forwardSignals } from './signals.js';
import { sandboxSignalTarget } from './sandbox-signals.js';
import { Socket } from 'node:net';
import { gateNative } from './native.js';
import { watchStartUp } from './start-up-gate.js';
import { utf8Tail } from './run-call.js';

/** The signal that ended the last run of this process, or null (endAsRun). */
let lastSignal: NodeJS.Signals | null = null;

/**
 * gate-sh ends as the run's bash ended: by the same signal when one ended it (`kill $$`, a last command bash
 * ran in its place and that crashed), so that the caller sees a signal and not 128+n, as from bash and from
 * the native gate-sh (shims/gate-sh-native.c exit_as_run). A signal this process cannot die of (node ignores
 * SIGPIPE) leaves the status. Call with the status about to be the exit code, nothing else left to do.
 */
export function endAsRun(status: number): void {
  const sig = lastSignal;
  if (sig === null || status !== 128 + (constants.signals[sig] ?? -1)) return;
  process.removeAllListeners(sig);
  try {
    process.kill(process.pid, sig);
  } catch {
    // the status stays the exit code
  }
}

export interface RunResult {
  status: number;
  durationMs: number;
  /** the last bytes of stderr, when the run relayed it (RunOptions.stderrTail) */
  stderrTail?: string;
}

export interface RunOptions {
  /** relay stderr through gate-sh (byte for byte, as it arrives) keeping this many trailing bytes: the
   * evidence of a sandbox denial for the on-failure rerun. Only for a stderr that is neither a terminal
   * nor the same file as stdout, where relaying cannot change what the caller sees. */
  stderrTail?: number;
  /** with stderrTail, for a stderr that IS stdout (`2>&1`, not a terminal): the child's stdout and stderr
   * share one pipe (their interleaving stays exactly as written), relayed to stdout; the tail is of both */
  merged?: boolean;
  /** the plan has a start-up phase: end it at the daemon when bash says its start-up files are read
   * (src/exec/start-up-gate.ts); onError when that failed (bash then exits 126 before the script) */
  startUp?: { end: () => Promise<void>; onError: (e: Error) => void };
}

/** Write all of `buf` to a blocking-or-not descriptor (gate-sh never makes its stdio non-blocking); false
 * when the reader has gone (EPIPE and the like). */
/**
 * bash has ended, so everything it wrote is in the relay pipe: read that now, without waiting. If the pipe is
 * still held — a background job that outlives the command (session sandboxes, docs/sandbox.md) — gate-sh
 * returns at once, as bash does, and the rest of the relay goes to a small copier of its own (cat, in a
 * session of its own), so the caller's stream stays open for the job as it would under bash.
 */
function handOver(source: Socket, fd: number, to: number, take: (chunk: Buffer) => void): void {
  if (source.destroyed) return;
  source.pause(); // no more reads by the stream: what is left in the pipe is read here or by the copier
  for (let c: Buffer | null; (c = source.read() as Buffer | null) !== null; ) take(c);
  const buf = Buffer.allocUnsafe(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break; // empty, still held: a job has it
      if ((e as NodeJS.ErrnoException).code === 'EINTR') continue;
      return void source.destroy();
    }
    if (n === 0) return void source.destroy(); // nobody else holds it: done
    take(Buffer.from(buf.subarray(0, n)));
    if (source.destroyed) return;
  }
  try {
    spawn('/bin/cat', [], { stdio: [fd, to, 'ignore'], detached: true }).on('error', () => {}).unref();
  } catch {
    /* no copier: the job meets a closed pipe, as it would after the caller stopped reading */
  }
  source.destroy();
}

function writeAll(fd: number, buf: Buffer): boolean {
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
  return true;
}

/**
 * Descriptors above 2 this process inherited from its caller, to pass on as bash would. Call it first
 * thing, before gate-sh opens anything. Node marks low inherited descriptors close-on-exec at start-up
 * (uv_disable_stdio_inheritance), so that flag cannot tell them apart; what can: Node's own descriptors
 * are event inodes (epoll, eventfd) and pipes with both ends held here. A pipe whose two ends were both
 * inherited is therefore not passed on (documented limitation).
 */
export function inheritedFds(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const targets = new Map<number, string>();
  for (const n of names) {
    const fd = Number(n);
    if (!(fd > 2)) continue;
    try {
      targets.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // the readdir's own descriptor, closed by now
    }
  }
  const pipeEnds = new Map<string, number>();
  for (const t of targets.values()) if (t.startsWith('pipe:')) pipeEnds.set(t, (pipeEnds.get(t) ?? 0) + 1);
  const out: number[] = [];
  for (const [fd, t] of targets) {
    if (t.startsWith('anon_inode:')) continue;
    if (t.startsWith('pipe:') && (pipeEnds.get(t) ?? 0) > 1) continue;
    out.push(fd);
  }
  return out.sort((a, b) => a - b);
}

/** A large script as an unlinked 0600 temp file: bash reopens it through /dev/fd/N; nothing stays on disk. */
function scriptFile(data: Buffer): number {
  const dir = mkdtempSync(join(tmpdir(), 'gate-sh-'));
  const path = join(dir, 'script');
  const fd = openSync(path, 'wx+', 0o600);
  try {
    writeSync(fd, data);
  } finally {
    unlinkSync(path);
    rmdirSync(dir);
  }
  return fd;
}

/** Monotonic ms. Not `performance.now()`: the first use of that global loads perf_hooks, ~1 ms of start-up. */
function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function runPlan(plan: RunPlan, opts: RunOptions = {}): Promise<RunResult> {
  const started = nowMs();
  return new Promise((resolve, reject) => {
    const su = plan.startUp && opts.startUp ? plan.startUp : undefined;
    const top = Math.max(2, ...plan.fds, plan.scriptFd?.fd ?? 0, su?.go ?? 0);
    const relay = (opts.stderrTail ?? 0) > 0;
    // the relay's pipe is ours (not Node's stdio 'pipe'), so that its descriptor can be drained and handed
    // on when bash ends while a background job still holds it (below)
    let shared: [number, number] | undefined;
    let readyPipe: [number, number] | undefined;
    let goPipe: [number, number] | undefined;
    try {
      if (relay) shared = gateNative().pipe();
      if (su) (readyPipe = gateNative().pipe()), (goPipe = gateNative().pipe());
    } catch (e) {
      return reject(e);
    }
    const stdio: (string | number)[] = shared ? ['inherit', opts.merged ? shared[1] : 'inherit', shared[1]] : ['inherit', 'inherit', 'inherit'];
    let scriptFd: number | undefined;
    try {
      if (plan.scriptFd) scriptFd = scriptFile(plan.scriptFd.data);
    } catch (e) {
      return reject(new Error(`cannot write the script to a temporary file: ${(e as Error).message}`));
    }
    const childEnd = (fd: number): number | 'ignore' =>
      plan.fds.includes(fd) ? fd : fd === plan.scriptFd?.fd ? (scriptFd as number) : fd === su?.ready ? readyPipe![1] : fd === su?.go ? goPipe![0] : 'ignore';
    for (let fd = 3; fd <= top; fd++) stdio.push(childEnd(fd));
    const forwarder = forwardSignals();
    // Under bubblewrap, bwrap gets its own session so a terminal's signals do not kill it (that would
    // SIGKILL the script through --die-with-parent); the forwarder signals the script itself.
    const sandboxed = plan.sandboxed === true;
    const child = spawn(plan.program, plan.args, { stdio: stdio as StdioOptions, env: plan.env, cwd: plan.cwd, argv0: plan.program, detached: sandboxed });
    forwarder.attach(sandboxed ? sandboxSignalTarget(child) : child);
    if (scriptFd !== undefined) closeSync(scriptFd); // the child holds its own copy
    if (shared) closeSync(shared[1]); // the child holds the write end: our read ends when the child's writers are gone
    if (su && readyPipe && goPipe) {
      closeSync(readyPipe[1]);
      closeSync(goPipe[0]);
      watchStartUp(readyPipe[0], goPipe[1], opts.startUp!.end, opts.startUp!.onError);
    }
    child.on('error', (e) => {
      forwarder.dispose();
      reject(new Error(`cannot start ${plan.program}: ${e.message}`));
    });
    let tail = Buffer.alloc(0);
    const source = shared ? new Socket({ fd: shared[0], readable: true, writable: false }) : null;
    const to = opts.merged ? 1 : 2;
    const take = (chunk: Buffer): void => {
      // the caller stopped reading (`| head`): close our end too, so the script meets the same EPIPE/SIGPIPE
      if (!writeAll(to, chunk) && opts.merged) return void (source as Socket).destroy();
      tail = Buffer.concat([tail, chunk]);
      const keep = opts.stderrTail as number;
      if (tail.length > keep) tail = tail.subarray(tail.length - keep);
    };
    let drained: Promise<void> = Promise.resolve();
    if (source) {
      source.on('data', take);
      drained = new Promise((done) => source.once('close', () => done()));
    }
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      forwarder.dispose();
      if (source && shared) handOver(source, shared[0], to, take);
      void drained.then(() => {
        lastSignal = signal;
        const result: RunResult = { status: exitStatus(code, signal, constants.signals), durationMs: nowMs() - started };
        if (relay) result.stderrTail = utf8Tail(tail);
        resolve(result);
      });
    });
  });
}
