/**
 * A real terminal for tests: node-pty plays the user's terminal emulator around the program under test
 * (gate-sh, or the host fixture), so the program sees a TTY on stdin/stdout exactly as on a desktop.
 * node-pty itself loses the tail of a quickly exiting program, so the terminal runs the program under the
 * end-marker wrapper (src/terminal/pty-marker.ts) and reports the status the marker carries.
 */
import { spawn, type IPty } from 'node-pty';
import { MarkerScanner, newNonce, STOPPED_PAYLOAD, wrapperArgv } from '../../src/terminal/pty-marker.js';

export interface TermOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  cols?: number;
  rows?: number;
}

export class Term {
  readonly pty: IPty;
  private chunks: Buffer[] = [];
  private waiters: Array<() => void> = [];
  /** how many times the program stopped (job control) */
  stops = 0;
  readonly exited: Promise<{ exitCode: number; signal?: number }>;

  constructor(file: string, args: string[], o: TermOptions = {}) {
    const nonce = newNonce();
    const scanner = new MarkerScanner(nonce);
    const [bash, ...wrapped] = wrapperArgv('/bin/bash', nonce, [file, ...args]);
    let onMarker: (status: number) => void = () => undefined;
    this.pty = spawn(bash, wrapped, {
      name: 'xterm-256color',
      cols: o.cols ?? 80,
      rows: o.rows ?? 24,
      cwd: o.cwd ?? process.cwd(),
      env: (o.env ?? process.env) as Record<string, string>,
      encoding: null,
    });
    this.pty.onData((d) => {
      let r = scanner.push(Buffer.isBuffer(d) ? d : Buffer.from(d));
      this.chunks.push(r.output);
      while (r.marker?.payload.toString() === STOPPED_PAYLOAD) {
        this.stops++; // the program stopped itself (Ctrl-Z): resume() is the user's `fg`
        r = scanner.push(r.rest ?? Buffer.alloc(0));
        this.chunks.push(r.output);
      }
      for (const w of this.waiters.splice(0)) w();
      if (r.marker) onMarker(r.marker.status);
    });
    this.exited = new Promise((resolve) => {
      onMarker = (status) => {
        resolve({ exitCode: status });
        this.pty.kill('SIGKILL');
      };
      this.pty.onExit((e) => resolve(e)); // the wrapper itself was killed (terminal closed)
    });
  }

  get pid(): number {
    return this.pty.pid;
  }

  output(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Forgets the output so far (long runs): offsets start again at 0. */
  discard(): void {
    this.chunks = [];
  }

  text(): string {
    return this.output().toString('latin1');
  }

  /** `fg`: continue the stopped program */
  resume(): void {
    process.kill(this.pty.pid, 'SIGCONT');
  }

  write(data: string | Buffer): void {
    this.pty.write(typeof data === 'string' ? Buffer.from(data) : data);
  }

  /** Resolves when the output (from `from` on) contains `what`; rejects with the output so far on timeout. */
  async waitFor(what: string | RegExp | Buffer, timeoutMs = 10_000, from = 0): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    const needle = what instanceof RegExp ? undefined : typeof what === 'string' ? Buffer.from(what) : what;
    let scan = from; // byte patterns: only look at what arrived since the last look
    for (;;) {
      const all = this.output();
      if (needle) {
        const at = all.indexOf(needle, scan);
        if (at >= 0) return at;
        scan = Math.max(from, all.length - needle.length + 1);
      } else {
        const at = all.subarray(from).toString('latin1').search(what as RegExp);
        if (at >= 0) return from + at;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${String(what)}; output so far: ${JSON.stringify(this.text().slice(-2000))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Waits for the program to exit, killing it after the timeout. */
  async exit(timeoutMs = 20_000): Promise<{ exitCode: number; signal?: number }> {
    let t: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      t = setTimeout(() => {
        this.pty.kill('SIGKILL');
        rej(new Error(`program did not exit; output: ${JSON.stringify(this.text().slice(-2000))}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(t);
    }
  }
}
