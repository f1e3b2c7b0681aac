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
import { MarkerScanner, newNonce, STOPPED_PAYLOAD, wrapperArgv } from './pty-marker.js';
import { hangUpSession, procStat, sessionMembers } from './pty-reap.js';
import { enterRaw, processTerminal, terminalSize, type TerminalIO } from './pty-terminal.js';

export interface PtyHostOptions {
  program: string;
  args: readonly string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** the real terminal; defaults to process.stdin/stdout */
  io?: TerminalIO;
  /** bytes the command reads on descriptor 3 (plan.ts: scripts too large for argv) */
  fd3?: Buffer;
  /** bash used for the wrapper (default /bin/bash) */
  bash?: string;
}

/** Signals gate-sh passes on to the hosted program's process group. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

export function hostInPty(opts: PtyHostOptions): Promise<number> {
  const io = opts.io ?? processTerminal();
  const nonce = newNonce();
  const fd3 = opts.fd3 === undefined ? undefined : privateFile(opts.fd3);
  const [file, ...argv] = wrapperArgv(opts.bash ?? '/bin/bash', nonce, [opts.program, ...opts.args], fd3?.path);
  const env = { ...opts.env } as Record<string, string>;
  const size = terminalSize(io);
  const pty: IPty = ptySpawn(file, argv, {
    name: env.TERM || 'xterm-256color',
    cols: size.cols,
    rows: size.rows,
    cwd: opts.cwd,
    env,
    encoding: null,
  });
  return new Promise<number>((resolve) => {
    const scanner = new MarkerScanner(nonce);
    let restore = enterRaw(io);
    let finished = false;

    const finish = (status: number, hangUp: boolean) => {
      if (finished) return;
      finished = true;
      cleanup();
      fd3?.remove();
      const done = () => resolve(status);
      if (hangUp) void hangUpSession(pty.pid).then(done);
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
      io.input.pause();
      io.output.off?.('resize', onResize);
      process.off('SIGHUP', onHangUp);
      for (const [sig, f] of forwarders) process.off(sig, f);
      restore();
    }
  });
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
