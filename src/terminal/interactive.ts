/**
 * `gate-sh` with no script on a terminal: an interactive gated shell.
 *
 *   prompt (node:readline: line editing, history) → pre-flight of the line (as `gate-sh -c LINE`) →
 *   the line runs in ONE long-lived bash in a PTY (pty-session.ts), which keeps cd, exports, functions,
 *   aliases and jobs between lines → its end marker brings the prompt back.
 * While a line runs, the real terminal is raw and every key goes to the PTY. Approval prompts for this
 * session appear inline on the real terminal and take one key from it (pty-approver.ts); the session's
 * output is held back meanwhile. The bash and its commands run inside the turn sandbox with the exec gate,
 * as a -c script would.
 */
import { callerSettings } from '../config/index.js';
import { createInterface, type Interface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { homedir } from 'node:os';
import { findBash, findBwrap, type ShellInvocation, withExecGate, withSandbox } from '../exec/index.js';
import type { PreflightReply } from '../protocol/index.js';
import { gatePaths, type GatePaths, runClientDir } from '../paths/index.js';
import { ByteEscaper, lineBytes } from './line-editor-bytes.js';
import { PromptKeys, Typeahead } from './interactive-typeahead.js';
import { InlineApprover } from './pty-approver.js';
import { LineGate } from './pty-gate.js';
import { PtySession, type SessionEvent } from './pty-session.js';
import { enterRaw, processTerminal, terminalSize, type TerminalIO } from './pty-terminal.js';
import { readBytes } from '../text/index.js';

export interface InteractiveOptions {
  invocation: ShellInvocation;
  env: Record<string, string | undefined>;
  io?: TerminalIO;
}

/** 'reclaiming': the line ended; the keys typed into it that no command read are being fetched back */
type State = 'prompt' | 'gating' | 'running' | 'reclaiming' | 'done';

export async function runInteractive(opts: InteractiveOptions): Promise<number> {
  const io = opts.io ?? processTerminal();
  let paths: GatePaths;
  try {
    paths = gatePaths(opts.env);
  } catch (e) {
    return fail(io, (e as Error).message);
  }
  const shell = new InteractiveShell(opts, io, paths);
  try {
    await shell.attachApprover();
  } catch (e) {
    return fail(io, `${(e as Error).message}; the interactive shell needs the daemon`);
  }
  return shell.run();
}

function fail(io: TerminalIO, message: string): number {
  io.output.write(`gate-sh: ${message}\n`);
  return 126;
}

/** Where variables from the plan differ from the caller's: given only to the session bash, not its wrappers. */
function envDelta(base: Record<string, string>, full: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(full)) if (base[k] !== v) out[k] = v;
  return out;
}

class InteractiveShell {
  private state: State = 'prompt';
  private rl: Interface | undefined;
  private history: string[] = [];
  private session: PtySession | undefined;
  /** the run id the session's bash (and the exec gate inside it) was started with */
  private sessionRun: string | undefined;
  /** how the session run's own line ended, told to the daemon when the session ends */
  private sessionLine: { status: number; ms: number } | undefined;
  private approver: InlineApprover | undefined;
  private readonly gate: LineGate;
  private readonly runs = new Set<string>();
  private preflightInFlight = false;
  private cwd = process.cwd();
  private status = 0;
  private restoreRaw: () => void = () => undefined;
  private held: Buffer[] = [];
  private readonly typeahead = new Typeahead();
  /** keys went into the session during the current line: some may be left unread at its end */
  private keysSent = false;
  private hangingUp = false;
  private finished = false;
  private cancelled = false; // session output held back while an approval prompt is on screen
  private current: { runId: string; started: number } | undefined;
  private resolveExit: (status: number) => void = () => undefined;

  constructor(
    private readonly opts: InteractiveOptions,
    private readonly io: TerminalIO,
    private readonly paths: GatePaths,
  ) {
    this.gate = new LineGate(paths, callerSettings(opts.env));
  }

  async attachApprover(): Promise<void> {
    const hooks = {
      mine: (p: { origin: string; run_id: string }) => (p.origin === 'preflight' ? this.preflightInFlight : this.runs.has(p.run_id)),
      show: (text: string) => this.io.output.write(text),
      hide: (text: string) => {
        this.io.output.write(text);
        if (!this.approver?.active) this.releaseHeld();
      },
    };
    try {
      this.approver = await InlineApprover.attach(this.paths, hooks);
    } catch {
      const { ensureDaemon } = await import('../client/autostart.js');
      await ensureDaemon(this.opts.env);
      this.approver = await InlineApprover.attach(this.paths, hooks);
    }
  }

  run(): Promise<number> {
    const onKey = (d: Buffer | string) => this.onKey(Buffer.isBuffer(d) ? d : Buffer.from(d, 'latin1'));
    const onResize = () => this.session?.resize(terminalSize(this.io));
    const onHangUp = (sig: number) => () => void this.hangUp(128 + sig);
    const hup = onHangUp(1);
    const term = onHangUp(15);
    process.on('SIGHUP', hup);
    process.on('SIGTERM', term);
    this.io.output.on?.('resize', onResize);
    this.io.input.on('error', hup);
    this.io.output.on?.('error', hup); // EIO: the terminal is gone
    this.keyListener = onKey;
    this.prompt();
    return new Promise<number>((resolve) => {
      this.resolveExit = (status) => {
        process.off('SIGHUP', hup);
        process.off('SIGTERM', term);
        this.io.output.off?.('resize', onResize);
        this.io.input.off('error', hup);
        this.io.output.off?.('error', hup);
        resolve(status);
      };
    });
  }

  private keyListener: (d: Buffer | string) => void = () => undefined;

  private prompt(): void {
    if (this.state === 'done') return;
    this.state = 'prompt';
    const home = this.opts.env.HOME || homedir();
    const where = this.cwd === home ? '~' : this.cwd.startsWith(home + '/') ? '~' + this.cwd.slice(home.length) : this.cwd;
    // readline decodes UTF-8; keys go through ByteEscaper so invalid bytes typed here survive (lineBytes)
    const keys = new PassThrough({ encoding: 'utf8' });
    const escaper = new ByteEscaper();
    const split = new PromptKeys((d) => keys.write(escaper.push(d)), (d) => this.typeahead.typed(d));
    const onRaw = (d: Buffer | string) => split.push(Buffer.isBuffer(d) ? d : Buffer.from(d, 'latin1'));
    const input = this.io.input;
    const wasRaw = input.isRaw ?? false;
    input.setRawMode?.(true);
    input.on('data', onRaw);
    input.resume();
    const rl = createInterface({ input: keys, output: this.io.output, terminal: true, history: this.history, historySize: 1000, prompt: `gate-sh:${where}$ ` });
    this.rl = rl;
    let answered = false;
    rl.on('line', (line) => {
      answered = true;
      this.history = (rl as unknown as { history: string[] }).history ?? this.history;
      rl.close();
      void this.onLine(lineBytes(line));
    });
    rl.on('SIGINT', () => {
      answered = true;
      this.typeahead.flush(); // as a terminal flushes its input on an interrupt
      this.io.output.write('^C\n');
      rl.close();
      this.prompt();
    });
    rl.on('close', () => {
      input.off('data', onRaw);
      input.pause();
      try {
        input.setRawMode?.(wasRaw);
      } catch {
        /* the terminal is gone */
      }
      if (this.rl === rl) this.rl = undefined;
      if (!answered) void this.endOfInput(); // Ctrl-D on an empty line
    });
    rl.prompt();
    const early = this.typeahead.forPrompt();
    if (early.length) split.push(early); // typed ahead, read by no command: as if typed here
  }

  private async onLine(bytes: Buffer): Promise<void> {
    // the daemon checks the line's faithful reading (raw-bytes.ts: an invalid byte is one private-use
    // character, a word character as to bash); bash gets the exact bytes
    const line = readBytes(bytes);
    if (line.trim() === '') {
      this.typeahead.notRun(); // what followed the empty line is the next prompt's
      return this.prompt();
    }
    this.state = 'gating';
    this.listenRaw();
    this.preflightInFlight = true;
    this.cancelled = false;
    const checked = await this.gate.check(line, this.cwd, this.opts.invocation.login, this.sessionRun);
    this.preflightInFlight = false;
    if (!checked.ok) {
      this.stopRaw();
      this.io.output.write(checked.messages.join('\n') + '\n');
      this.status = 126;
      this.typeahead.notRun();
      return this.prompt();
    }
    try {
      await this.ensureSession(checked.reply);
    } catch (e) {
      this.stopRaw();
      this.io.output.write(`gate-sh: ${(e as Error).message}; nothing ran\n`);
      this.status = 126;
      this.typeahead.notRun();
      return this.prompt();
    }
    this.runs.add(checked.reply.run_id);
    this.current = { runId: checked.reply.run_id, started: Date.now() };
    if (this.cancelled) {
      this.cancelled = false;
      this.typeahead.flush();
      this.stopRaw();
      this.io.output.write('^C\n');
      this.status = 130;
      return this.prompt();
    }
    this.state = 'running';
    this.session!.run(bytes, this.status);
    this.keysSent = false;
    for (const d of this.typeahead.forCommand()) this.toSession(d); // typed after the Enter: the command's first
  }

  /** The long-lived bash, started on the first allowed line in that line's turn sandbox with the exec gate. */
  private async ensureSession(reply: PreflightReply): Promise<void> {
    if (this.session) return;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.opts.env)) if (v !== undefined) env[k] = v;
    const inv = this.opts.invocation;
    const bash = findBash();
    const base = {
      program: bash,
      args: [...inv.longOptions.filter((o) => o !== '--norc' && o !== '--noprofile'), '--noediting', '--rcfile', '/dev/fd/5', '-i'],
      env: { ...env, GATE_RUN: reply.run_id },
      cwd: this.cwd,
    };
    // the first line's run is the session's (its run-finished comes when the session ends): its client folder
    const clientDir = runClientDir(this.paths, reply.run_id);
    const sandboxed = withSandbox(base, { policy: reply.sandbox, env, bwrap: () => findBwrap(env), interactive: true, secrets: reply.secrets, clientDir });
    const plan = withExecGate(sandboxed, { paths: { ...this.paths, clientDir }, runId: reply.run_id, parentPid: 0 });
    const rc = inv.longOptions.includes('--norc') ? 'none' : inv.login ? 'profile' : 'bashrc';
    const { session, cwd } = await PtySession.start(
      { program: plan.program, args: plan.args, env, lateEnv: envDelta(env, plan.env), cwd: this.cwd, size: terminalSize(this.io), rc, bash },
      (e) => this.onSession(e),
    );
    this.session = session;
    this.sessionRun = reply.run_id;
    this.cwd = cwd;
  }

  private onSession(e: SessionEvent): void {
    if (e.kind === 'output') {
      if (this.approver?.active) this.held.push(e.data);
      else this.writeOut(e.data);
    } else if (e.kind === 'line-done') {
      this.status = e.status;
      this.cwd = e.cwd || this.cwd;
      // the session's own run (its first line's) lives as long as the session: the daemon ends a finished
      // run's settlements, and the session bash's execs carry that run's id. Told at the end.
      const line = this.current;
      if (line && line.runId === this.sessionRun) this.sessionLine = { status: e.status, ms: Date.now() - line.started };
      else if (line) this.gate.finished(line.runId, e.status, Date.now() - line.started);
      this.current = undefined;
      if (this.state !== 'running') return;
      if (this.keysSent) {
        // keys typed as the line ended may sit unread in the session's terminal: fetch them for the prompt
        this.state = 'reclaiming';
        this.session!.reclaimInput();
      } else {
        this.stopRaw();
        this.prompt();
      }
    } else if (e.kind === 'unread') {
      if (this.state !== 'reclaiming') return;
      this.stopRaw();
      this.typeahead.lineEnded(e.data);
      this.prompt();
    } else if (!this.hangingUp) this.finish(e.status);
  }

  private writeOut(data: Buffer): void {
    if (!this.io.output.write(data) && this.session) {
      this.session.pause();
      this.io.output.once('drain', () => this.session?.resume());
    }
  }

  private releaseHeld(): void {
    const held = this.held;
    this.held = [];
    for (const d of held) this.writeOut(d);
    if (this.session && this.state === 'running') {
      // full-screen programs redraw on a size change: repaint what the prompt covered
      const s = terminalSize(this.io);
      this.session.resize({ cols: Math.max(1, s.cols - 1), rows: s.rows });
      this.session.resize(s);
    }
  }

  private onKey(d: Buffer): void {
    if (this.approver?.active) return this.approver.key(d);
    if (this.state === 'running') this.toSession(d);
    else if (this.state === 'gating') {
      // Ctrl-C before the line started: it does not run; other keys wait for the command
      if (d.includes(0x03)) this.cancelled = true;
      else this.typeahead.typed(d);
    } else if (this.state === 'reclaiming') this.typeahead.typed(d);
  }

  private toSession(d: Buffer): void {
    this.keysSent = true;
    this.session?.write(d);
  }

  private listenRaw(): void {
    this.restoreRaw = enterRaw(this.io);
    this.io.input.on('data', this.keyListener);
    this.io.input.resume();
  }

  private stopRaw(): void {
    this.io.input.off('data', this.keyListener);
    this.restoreRaw();
    this.restoreRaw = () => undefined;
  }

  private async endOfInput(): Promise<void> {
    if (this.state === 'done') return;
    this.io.output.write('exit\n');
    if (!this.session) return this.finish(this.status);
    this.state = 'running';
    this.listenRaw();
    this.session.close(); // bash reads end of input and exits with the last status
  }

  /** The terminal is gone (or gate-sh was told to stop): reap the whole session before exiting. */
  private async hangUp(status: number): Promise<void> {
    if (this.state === 'done' || this.hangingUp) return;
    this.hangingUp = true;
    this.state = 'done';
    this.rl?.close();
    await this.session?.hangUp();
    this.finish(status);
  }

  private finish(status: number): void {
    if (this.finished) return;
    this.finished = true;
    this.state = 'done';
    this.rl?.close();
    this.stopRaw();
    this.io.input.pause();
    this.approver?.close();
    if (this.sessionRun && this.sessionLine) this.gate.finished(this.sessionRun, this.sessionLine.status, this.sessionLine.ms);
    this.gate.close();
    this.resolveExit(status);
  }
}
