/**
 * The user's real terminal while a PTY is hosted: raw mode (every key goes to the hosted program, which has
 * its own line discipline), its size, and restoring it on every way out.
 */
import { spawnSync } from 'node:child_process';
import type { ReadStream, WriteStream } from 'node:tty';

export interface TerminalIO {
  input: NodeJS.ReadableStream & Partial<Pick<ReadStream, 'isTTY' | 'setRawMode' | 'isRaw'>>;
  output: NodeJS.WritableStream & Partial<Pick<WriteStream, 'isTTY' | 'columns' | 'rows'>>;
}

export interface Size {
  cols: number;
  rows: number;
}

export const DEFAULT_SIZE: Size = { cols: 80, rows: 24 };

export function processTerminal(): TerminalIO {
  return { input: process.stdin, output: process.stdout };
}

/** The window size of the real terminal (stdout, else stdin's terminal), else 80x24. */
export function terminalSize(io: TerminalIO): Size {
  const o = io.output;
  if (o.isTTY && o.columns && o.rows) return { cols: o.columns, rows: o.rows };
  return DEFAULT_SIZE;
}

/**
 * Puts the input terminal in raw mode; returns the function that restores the previous mode. Output
 * post-processing is turned off too (libuv's raw mode keeps ONLCR): the hosted PTY already turned \n into
 * \r\n, so the real terminal must pass its bytes unchanged, as `script(1)` does.
 */
export function enterRaw(io: TerminalIO): () => void {
  const input = io.input;
  if (!input.isTTY || !input.setRawMode) return () => undefined;
  const was = input.isRaw ?? false;
  input.setRawMode(true);
  if (input === process.stdin) spawnSync('stty', ['-opost'], { stdio: ['inherit', 'ignore', 'ignore'] });
  return () => {
    try {
      input.setRawMode?.(was);
      // leaving raw mode restores the saved termios (opost included); staying raw needs it back by hand
      if (was && input === process.stdin) spawnSync('stty', ['opost'], { stdio: ['inherit', 'ignore', 'ignore'] });
    } catch {
      /* the terminal is gone */
    }
  };
}
