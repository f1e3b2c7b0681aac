/**
 * The user's real terminal while a PTY is hosted: raw mode (every key goes to the hosted program, which has
 * its own line discipline), its size, and restoring it on every way out.
 */
import { spawnSync } from 'node:child_process';
import type { ReadStream, WriteStream } from 'node:tty';
import { gateNative } from '../exec/index.js';

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

/** The hosted PTY's end-of-file key: node-pty's terminals start with the default c_cc (VEOF = Ctrl-D). */
export const PTY_EOF = 0x04;

/**
 * What the real terminal already holds for its reader, taken while it is still in canonical mode, for the
 * hosted PTY: lines as typed, and each end of file (a Ctrl-D typed ahead, or `script` on a stdin at EOF) as
 * the PTY's own EOF key. Left in the queue, the raw mode would hand an end of file out as a NUL byte, which
 * the hosted terminal echoes as `^@` (docs/shell.md). Empty when there is nothing, when the terminal is not in
 * canonical mode (then raw mode changes nothing) or when the input is not the process's own stdin.
 */
export function takeLineInput(io: TerminalIO): Buffer {
  if (io.input !== process.stdin || !io.input.isTTY) return Buffer.alloc(0);
  try {
    return gateNative().takeLineInput(0, PTY_EOF) ?? Buffer.alloc(0);
  } catch {
    return Buffer.alloc(0); // no addon: the terminal is used as before
  }
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
