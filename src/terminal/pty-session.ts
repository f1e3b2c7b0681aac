/**
 * One long-lived bash in a PTY for the interactive gated shell: it holds cd, exported variables, functions
 * and aliases between lines. gate-sh sends it only lines that passed pre-flight.
 *
 *   node-pty ── wrapper (pty-marker.ts: lossless exit, job control) ── bash -i (the session)
 *     fd 0  the command FIFO (only gate-sh holds its write end; unlinked once both ends are open)
 *     fd 4  the terminal; each line runs with it as stdin (`eval "$line" <&4`), so `read` and `less` work
 *     PROMPT_COMMAND prints the end marker after every line (status + $PWD), also after Ctrl-C aborts one,
 *     or, when asked (reclaimInput), the keys left unread on the terminal
 * Interactive bash gives real-shell semantics: Ctrl-C aborts the whole line (loops too), Ctrl-Z stops the
 * job and returns to the prompt (`fg`, `jobs` work), `exit N` ends the session with N.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as ptySpawn, type IPty } from 'node-pty';
import { MarkerScanner, newNonce, STOPPED_PAYLOAD, wrapperArgv, type Marker } from './pty-marker.js';
import { hangUpSession } from './pty-reap.js';
import type { Size } from './pty-terminal.js';

export interface SessionSpawn {
  /** the session bash as the plan builds it (bash, or bwrap ... bash) with `--rcfile /dev/fd/5 -i` */
  program: string;
  args: readonly string[];
  env: Record<string, string>;
  /** variables only the session bash and its commands get, not the wrapper (LD_PRELOAD, GATE_*) */
  lateEnv?: Record<string, string>;
  cwd: string;
  size: Size;
  /** start-up files read first: ~/.bashrc (bash -i's default), the login profile (-l), or none (--norc) */
  rc: 'bashrc' | 'profile' | 'none';
  bash?: string;
}

export type SessionEvent =
  | { kind: 'output'; data: Buffer }
  | { kind: 'line-done'; status: number; cwd: string }
  /** the answer to reclaimInput(): keys on the terminal that no command read, in the order typed */
  | { kind: 'unread'; data: Buffer }
  | { kind: 'exit'; status: number };

/** Quote bytes for bash's $'...': every byte survives, including invalid UTF-8. */
export function ansiC(text: string | Buffer): string {
  const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let out = "$'";
  for (const c of b) {
    if (c === 0x5c) out += '\\\\';
    else if (c === 0x27) out += "\\'";
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += '\\x' + c.toString(16).padStart(2, '0');
  }
  return out + "'";
}

/** The rcfile of the session bash: user's rc (optional), then gate-sh's hooks, which must win. */
function rcScript(nonce: string, rc: SessionSpawn['rc']): string {
  const user = {
    none: '',
    bashrc: '[ -f ~/.bashrc ] && . ~/.bashrc',
    profile:
      '[ -f /etc/profile ] && . /etc/profile; for __f in ~/.bash_profile ~/.bash_login ~/.profile; do [ -f "$__f" ] && { . "$__f"; break; }; done; unset __f',
  }[rc];
  return [
    'exec 5<&-',
    user,
    'set +o history; unset HISTFILE; PS1=; PS2=; PS4=${PS4:-+ }',
    // byte length of $PWD (LC_ALL=C) so the marker is parsed by length, whatever the path holds
    `__gate_mark() { local s=$? LC_ALL=C; if [ -n "$__gate_u" ]; then __gate_u=; __gate_unread; return; fi; printf '\\033]7770;%s;%d;%d;P%s\\007' '${nonce}' "$s" "$((\${#PWD}+1))" "$PWD"; }`,
    // keys typed on the terminal that no command read (reclaimInput): every byte, non-canonical for a moment
    // so a partial line is readable too, in hex without od's newlines (the terminal would make them \r\n);
    // `command -p`: no user function, alias or PATH in the way
    `__gate_unread() { local t h=; t=$(command -p stty -g <&4 2>/dev/null) && command -p stty -icanon min 0 time 0 <&4 2>/dev/null && h=$(command -p od -An -v -tx1 <&4 2>/dev/null); [ -n "$t" ] && command -p stty "$t" <&4 2>/dev/null; h=\${h//[^0-9a-f]/}; printf '\\033]7770;%s;0;%d;U%s\\007' '${nonce}' "$((\${#h}+1))" "$h"; }`,
    'PROMPT_COMMAND=__gate_mark',
    '__gate_status() { return "$1"; }', // $? as gate-sh saw it (126 after a denied line)
    '',
  ].join('\n');
}

export class PtySession {
  private readonly pty: IPty;
  private readonly scanner: MarkerScanner;
  private fifo = -1;
  private readonly dir: string;
  private ended = false;

  private constructor(
    o: SessionSpawn,
    private readonly emit: (e: SessionEvent) => void,
  ) {
    const nonce = newNonce();
    this.scanner = new MarkerScanner(nonce);
    this.dir = mkdtempSync(join(tmpdir(), 'gate-tty-'));
    const fifoPath = join(this.dir, 'cmd');
    const rcPath = join(this.dir, 'rc');
    const mk = spawnSync('mkfifo', ['-m', '600', fifoPath]);
    if (mk.status !== 0) throw new Error(`gate-sh: cannot create the session's command channel: ${String(mk.stderr)}`);
    writeFileSync(rcPath, rcScript(nonce, o.rc), { mode: 0o600 });
    const late = Object.entries(o.lateEnv ?? {}).map(([k, v]) => `${k}=${v}`);
    // outside any sandbox: the rc file on fd 5, the terminal on fd 4, the FIFO as the session's stdin
    const boot = 'exec 5<"$2" 4<&0 0<"$1" && shift 2 && exec env "$@"';
    const session = ['/bin/bash', '--noprofile', '--norc', '-c', boot, 'gate-sh', fifoPath, rcPath, ...late, o.program, ...o.args];
    const [file, ...argv] = wrapperArgv(o.bash ?? '/bin/bash', nonce, session);
    this.pty = ptySpawn(file, argv, { name: o.env.TERM || 'xterm-256color', cols: o.size.cols, rows: o.size.rows, cwd: o.cwd, env: o.env, encoding: null });
    this.pty.onData((d) => this.onData(Buffer.isBuffer(d) ? d : Buffer.from(d)));
    this.pty.onExit(({ exitCode, signal }) => this.end(signal ? 128 + signal : exitCode));
  }

  /** Starts the session and resolves once bash is ready (its first marker). */
  static async start(o: SessionSpawn, emit: (e: SessionEvent) => void): Promise<{ session: PtySession; cwd: string }> {
    let ready: (cwd: string) => void = () => undefined;
    let failed: (e: Error) => void = () => undefined;
    const first = new Promise<string>((res, rej) => ((ready = res), (failed = rej)));
    let started = false;
    const s = new PtySession(o, (e) => {
      if (!started && e.kind === 'line-done') return (started = true), ready(e.cwd);
      if (!started && e.kind === 'exit') return failed(new Error(`the session shell exited at start (status ${e.status})`));
      emit(e);
    });
    const handle = await open(join(s.dir, 'cmd'), 'w'); // blocks until the wrapper opened the read end
    s.fifo = openSync(`/proc/self/fd/${handle.fd}`, 'w'); // a plain fd for synchronous writes
    await handle.close();
    rmSync(s.dir, { recursive: true, force: true }); // no path left to the command channel or the rc file
    return { session: s, cwd: await first };
  }

  get pid(): number {
    return this.pty.pid;
  }

  /**
   * Sends one checked line: bash runs it with the terminal as stdin; a marker follows when it is done.
   * `lastStatus` becomes `$?` for the line (a denied line leaves 126, as `gate-sh -c` would).
   */
  run(line: string | Buffer, lastStatus: number): void {
    writeSync(this.fifo, `__gate_l=${ansiC(line)}; __gate_status ${lastStatus & 255}; eval "$__gate_l" <&4 4<&-\n`);
  }

  write(data: Buffer): void {
    this.pty.write(data);
  }

  resize(size: Size): void {
    if (!this.ended) this.pty.resize(size.cols, size.rows);
  }

  pause(): void {
    this.pty.pause();
  }

  resume(): void {
    this.pty.resume();
  }

  /** Terminal gone or gate-sh killed: SIGHUP the whole session, SIGKILL what stays. */
  async hangUp(): Promise<void> {
    this.closeFifo();
    await hangUpSession(this.pty.pid);
  }

  /**
   * After a line: asks bash for the keys still unread on the terminal (typed while the line ran, or as it
   * ended, but read by no command); they come back as an 'unread' event, for the next prompt, as bash's own
   * readline would have read them. Costs a few processes (stty, od), so only call it when keys were sent.
   */
  reclaimInput(): void {
    if (this.fifo >= 0) writeSync(this.fifo, '__gate_u=1\n');
  }

  /** Asks bash to exit (end of input, as Ctrl-D at bash's prompt). */
  close(): void {
    this.closeFifo();
  }

  private closeFifo(): void {
    if (this.fifo >= 0) closeSync(this.fifo);
    this.fifo = -1;
  }

  private onData(chunk: Buffer): void {
    let r = this.scanner.push(chunk);
    for (;;) {
      if (r.output.length) this.emit({ kind: 'output', data: r.output });
      if (!r.marker) return;
      this.onMarker(r.marker);
      if (this.ended) return;
      r = this.scanner.push(r.rest ?? Buffer.alloc(0));
    }
  }

  private onMarker(m: Marker): void {
    const p = m.payload.toString('latin1');
    if (p.startsWith('P')) this.emit({ kind: 'line-done', status: m.status, cwd: Buffer.from(m.payload.subarray(1)).toString('utf8') });
    else if (p.startsWith('U')) this.emit({ kind: 'unread', data: Buffer.from(p.slice(1).replace(/[^0-9a-f]/g, ''), 'hex') });
    else if (p === STOPPED_PAYLOAD) process.kill(this.pty.pid, 'SIGCONT'); // bash itself stopped: carry on
    else {
      // the wrapper's final marker: bash exited and everything it printed has been read
      try {
        process.kill(this.pty.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      this.end(m.status);
    }
  }

  private end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    this.closeFifo();
    const tail = this.scanner.flush();
    if (tail.length) this.emit({ kind: 'output', data: tail });
    this.emit({ kind: 'exit', status });
  }
}
