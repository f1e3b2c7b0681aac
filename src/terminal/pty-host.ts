/**
 * Hosts one command in a pseudo-terminal (node-pty) and connects it to the user's real terminal: raw keys
 * in, bytes out (encoding null: binary survives), window size following SIGWINCH, Ctrl-Z suspending gate-sh
 * itself, terminal hang-up reaping the whole session, and the exit status preserved (128+n for signal n).
 *
 * Lossless: the command runs under a wrapper that prints an end marker (pty-marker.ts) and then stops
 * itself; only when the marker has been read is the wrapper killed, so the tail is never lost.
 * Use this only with a terminal (or --pty): the PTY changes bytes (\n -> \r\n, stderr merged into stdout).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as ptySpawn, type IPty } from 'node-pty';
import { EXEC_GATE_VARIABLES as V } from '../protocol/index.js';
import { MarkerScanner, newNonce, STOPPED_PAYLOAD, wrapperArgv } from './pty-marker.js';
import { hangUpSession, procStat, sessionMembers } from './pty-reap.js';
import { enterRaw, processTerminal, takeLineInput, terminalSize, type TerminalIO } from './pty-terminal.js';

export interface PtyHostOptions {
  program: string;
  args: readonly string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** the real terminal; defaults to process.stdin/stdout */
  io?: TerminalIO;
  /** variables for the command only, not the wrapper around it (the exec gate's LD_PRELOAD, marks) */
  lateEnv?: Record<string, string>;
  /** a script the command reads on descriptor `fd` (plan.ts: scripts too large for argv) */
  scriptFd?: { fd: number; data: Buffer };
  /** bash used for the wrapper (default /bin/bash) */
  bash?: string;
}

/** Signals gate-sh passes on to the hosted program's process group. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

export function hostInPty(opts: PtyHostOptions): Promise<number> {
  const io = opts.io ?? processTerminal();
  const nonce = newNonce();
  const script = opts.scriptFd === undefined ? undefined : privateFile(opts.scriptFd.data);
  const late = Object.entries(opts.lateEnv ?? {}).map(([k, v]) => `${k}=${v}`);
  const [file, ...argv] = wrapperArgv(opts.bash ?? '/bin/bash', nonce, [opts.program, ...opts.args], {
    scriptFile: script?.path,
    scriptFd: opts.scriptFd?.fd,
    late,
  });
  const env = { ...opts.env } as Record<string, string>;
  const size = terminalSize(io);
  let pty: IPty;
  try {
    pty = ptySpawn(file, argv, { name: env.TERM || 'xterm-256color', cols: size.cols, rows: size.rows, cwd: opts.cwd, env, encoding: null });
  } catch (e) {
    script?.remove();
    return Promise.reject(new Error(`cannot start ${opts.program} in a pseudo-terminal: ${(e as Error).message}`));
  }
  return new Promise<number>((resolve) => {
    const scanner = new MarkerScanner(nonce);
    const typedAhead = takeLineInput(io); // before raw mode turns a pending end of file into a NUL byte
    let restore = enterRaw(io);
    if (typedAhead.length) pty.write(typedAhead);
    let finished = false;

    const finish = (status: number, hangUp: boolean) => {
      if (finished) return;
      finished = true;
      cleanup();
      script?.remove();
      const done = () => resolve(status);
      if (hangUp) void reapShielded(pty.pid, io).then(done);
      else {
        // the marker was read: everything before it is drained; end the stopped wrapper
        signalPid(pty.pid, 'SIGKILL');
        done();
      }
    };

    const onOutput = (chunk: Buffer) => {
      let r = scanner.push(chunk);
      for (;;) {
        if (r.output.length && !io.output.write(r.output)) {
          pty.pause();
          io.output.once('drain', () => pty.resume());
        }
        if (!r.marker) return;
        if (r.marker.payload.toString() !== STOPPED_PAYLOAD) {
          if (r.rest?.length) io.output.write(r.rest); // output of background jobs racing the marker
          return finish(r.marker.status, false);
        }
        suspendSelf();
        r = scanner.push(r.rest ?? Buffer.alloc(0));
      }
    };
    const dataSub = pty.onData((d) => onOutput(Buffer.isBuffer(d) ? d : Buffer.from(d)));
    const exitSub = pty.onExit(({ exitCode, signal }) => {
      // the wrapper died before printing the marker (killed from outside): report as bash would
      const tail = scanner.flush();
      if (tail.length) io.output.write(tail);
      finish(signal ? 128 + signal : exitCode, true);
    });

    const onInput = (data: Buffer | string) => {
      const buf = Buffer.isBuffer(data) ? data : Buffer.from(data);
      pty.write(buf);
    };
    const onInputEnd = () => pty.write(Buffer.from([0x04])); // EOF on a pipe: Ctrl-D at the hosted reader
    const onResize = () => {
      const s = terminalSize(io);
      pty.resize(s.cols, s.rows);
    };
    const onHangUp = () => finish(129, true);
    // the job runs in its own process group(s) under the wrapper; the wrapper must live to print the marker
    const forwarders = FORWARDED.map((sig) => [sig, () => signalJobs(pty.pid, sig)] as const);

    // Ctrl-Z: the wrapper reports the stopped job; suspend gate-sh too so the user's shell gets the terminal
    const suspendSelf = () => {
      restore();
      process.once('SIGCONT', () => {
        if (finished) return;
        restore = enterRaw(io);
        onResize();
        signalPid(pty.pid, 'SIGCONT'); // the wrapper brings the job back to the foreground
      });
      process.kill(process.pid, 'SIGSTOP');
    };

    io.input.on('data', onInput);
    io.input.on('end', onInputEnd);
    io.input.on('error', onHangUp);
    io.output.on?.('error', onHangUp); // EIO: the terminal is gone
    io.input.resume();
    io.output.on?.('resize', onResize);
    process.on('SIGHUP', onHangUp);
    for (const [sig, f] of forwarders) process.on(sig, f);

    function cleanup() {
      dataSub.dispose();
      exitSub.dispose();
      io.input.off('data', onInput);
      io.input.off('end', onInputEnd);
      io.input.off('error', onHangUp);
      io.output.off?.('error', onHangUp);
      io.input.pause();
      io.output.off?.('resize', onResize);
      process.off('SIGHUP', onHangUp);
      for (const [sig, f] of forwarders) process.off(sig, f);
      restore();
    }
  });
}

/**
 * Hangs up the session while shielding gate-sh from the hang-up's own echoes: a closing terminal often
 * signals twice (EIO on stdin, then SIGHUP when the user's shell exits; or the emulator's SIGHUP and the
 * kernel's), and with the host's listeners already gone, a second SIGHUP or an unheard 'error' would kill
 * gate-sh inside the grace period, before it SIGKILLs what ignored the first SIGHUP.
 */
async function reapShielded(sid: number, io: TerminalIO): Promise<void> {
  const ignore = () => undefined;
  process.on('SIGHUP', ignore);
  io.input.on('error', ignore);
  io.output.on?.('error', ignore);
  try {
    await hangUpSession(sid);
  } finally {
    process.off('SIGHUP', ignore);
    io.input.off('error', ignore);
    io.output.off?.('error', ignore);
  }
}

/** Variables that must reach the command but not the wrapper bash: the exec gate's library and marks. */
const LATE_KEYS = ['LD_PRELOAD', V.checked, V.innerProgram, V.escalate];

/**
 * gate-sh's single-command PTY path (`--pty`, or a terminal where the command must not hold the real one):
 * runs a RunPlan (plan.ts) in a PTY on the user's terminal. Inherited descriptors above 2 cannot cross a
 * PTY spawn; the large-script descriptor is recreated by the wrapper.
 */
export function runPlanInPty(
  plan: { program: string; args: string[]; env: Record<string, string>; cwd: string; scriptFd?: { fd: number; data: Buffer } },
  callerEnv: Record<string, string | undefined>,
  io?: TerminalIO,
): Promise<number> {
  const env: Record<string, string> = { ...plan.env };
  const lateEnv: Record<string, string> = {};
  for (const k of LATE_KEYS) {
    if (env[k] === undefined || env[k] === callerEnv[k]) continue;
    lateEnv[k] = env[k];
    if (callerEnv[k] === undefined) delete env[k];
    else env[k] = callerEnv[k]!;
  }
  return hostInPty({ program: plan.program, args: plan.args, env, lateEnv, cwd: plan.cwd, scriptFd: plan.scriptFd, io });
}

/** A 0600 file in a fresh 0700 folder (node-pty cannot pass extra descriptors; the wrapper opens it as fd 3). */
function privateFile(data: Buffer): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gate-pty-'));
  const path = join(dir, 'fd3');
  writeFileSync(path, data, { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Sends `sig` to every process group of the session except the wrapper's own. */
function signalJobs(sid: number, sig: NodeJS.Signals): void {
  const groups = new Set(sessionMembers(sid).map((p) => procStat(p)?.pgrp ?? sid));
  groups.delete(sid);
  for (const g of groups) signalPid(-g, sig);
}

function signalPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}
