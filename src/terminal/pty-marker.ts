/**
 * The end-of-command marker that makes PTY output lossless.
 *
 * node-pty loses the tail of the output when the child exits quickly (8 of 20 runs of `seq 1 2000`), so the child never exits
 * on its own: after the command, a wrapper (or the session loop) prints
 *   ESC ] 7770 ; <nonce> ; <status> ; <byte length> ; <payload> BEL
 * on the same terminal. Terminal output is ordered, so once the parent has read the marker it has read every
 * byte written before it, and only then does it end the child. The nonce is random per host, so ordinary
 * output never matches; the scanner removes the marker from the stream. Pure: no I/O.
 */
import { randomBytes } from 'node:crypto';

export interface Marker {
  /** the command's exit status (128+n when killed by signal n) */
  status: number;
  /** extra bytes the loop reports (the session's $PWD); empty for a single command */
  payload: Buffer;
}

export interface ScanResult {
  /** bytes to show the user, marker removed */
  output: Buffer;
  marker?: Marker;
  /** bytes that followed the marker in the same chunk (scanning stops at a marker) */
  rest?: Buffer;
}

export function newNonce(): string {
  return randomBytes(12).toString('hex');
}

export function markerPrefix(nonce: string): Buffer {
  return Buffer.from(`\x1b]7770;${nonce};`);
}

/** Bash that prints the marker with an empty payload (the session loop adds $PWD itself). */
export function markerPrintf(nonceExpr: string, statusExpr: string): string {
  return `printf '\\033]7770;%s;%d;0;\\007' "${nonceExpr}" "${statusExpr}"`;
}

/** Marker payload meaning "the job stopped (Ctrl-Z); suspend the host and send SIGCONT to resume". */
export const STOPPED_PAYLOAD = 'T';

/**
 * argv for bash that runs `argv` (the real command, e.g. bash -c script) as a child, prints the marker with
 * its exit status, then stops itself until the host has drained the output and kills it.
 * Job control (`set -m`) puts the command in its own process group: a group whose parent is in the same
 * session is not orphaned, so the kernel delivers Ctrl-Z's SIGTSTP instead of discarding it. When the job
 * stops, the wrapper prints a STOPPED marker and stops itself; the host suspends gate-sh and, once
 * continued, continues the wrapper, which brings the job back with `fg`. Posix mode only silences bash's
 * "[1]+ Stopped" notice (the user's own shell prints one for gate-sh); it is not exported to the command.
 * `extra.scriptFile`: a file the command gets on descriptor `extra.scriptFd` (a large script, see plan.ts);
 * `extra.late`: K=V settings for the command only (the exec gate's LD_PRELOAD must not load into the wrapper).
 */
export function wrapperArgv(
  bash: string,
  nonce: string,
  argv: readonly string[],
  extra: { scriptFile?: string; scriptFd?: number; late?: readonly string[] } = {},
): string[] {
  const file = extra.scriptFile;
  const open = file === undefined ? '' : `exec ${extra.scriptFd ?? 3}<"$1" || exit 126; shift; `;
  const stopped = `printf '\\033]7770;%s;%d;1;${STOPPED_PAYLOAD}\\007' "$0" "$__gate_s"`;
  const script =
    `set -m -o posix; ${open}"$@"; __gate_s=$?; ` +
    `while [ -n "$(jobs -ps)" ]; do ${stopped}; kill -STOP $$; fg >/dev/null; __gate_s=$?; done; ` +
    `${markerPrintf('$0', '$__gate_s')}; kill -STOP $$; exit "$__gate_s"`;
  const late = extra.late?.length ? ['/usr/bin/env', ...extra.late] : [];
  return [bash, '--noprofile', '--norc', '-c', script, nonce, ...(file === undefined ? [] : [file]), ...late, ...argv];
}

const DIGITS = /^[0-9]{1,10}$/;

/** Streaming scanner: feed PTY chunks, get output with the marker removed and the marker once complete. */
export class MarkerScanner {
  private readonly prefix: Buffer;
  private held: Buffer = Buffer.alloc(0);

  constructor(nonce: string) {
    this.prefix = markerPrefix(nonce);
  }

  push(chunk: Buffer): ScanResult {
    const data = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    let from = 0;
    for (;;) {
      const i = data.indexOf(this.prefix, from);
      if (i < 0) {
        const keep = partialPrefixLength(data, this.prefix);
        this.held = Buffer.from(data.subarray(data.length - keep));
        return { output: data.subarray(0, data.length - keep) };
      }
      const parsed = parseFields(data, i + this.prefix.length);
      if (parsed === 'incomplete') {
        this.held = Buffer.from(data.subarray(i));
        return { output: data.subarray(0, i) };
      }
      if (parsed === 'malformed') {
        from = i + 1; // not ours after all: a forgery or noise; keep it as output
        continue;
      }
      return { output: data.subarray(0, i), marker: parsed.marker, rest: data.subarray(parsed.end) };
    }
  }

  /** bytes still held back (a partial marker at the very end of the stream) */
  flush(): Buffer {
    const h = this.held;
    this.held = Buffer.alloc(0);
    return h;
  }
}

/** Length of the longest suffix of `data` that is a proper prefix of `prefix`. */
function partialPrefixLength(data: Buffer, prefix: Buffer): number {
  const max = Math.min(prefix.length - 1, data.length);
  for (let n = max; n > 0; n--) {
    if (data[data.length - n] === prefix[0] && data.subarray(data.length - n).equals(prefix.subarray(0, n))) return n;
  }
  return 0;
}

type Parsed = 'incomplete' | 'malformed' | { marker: Marker; end: number };

/** status ; length ; payload BEL, starting at `at`. */
function parseFields(data: Buffer, at: number): Parsed {
  const s = readNumber(data, at);
  if (typeof s === 'string') return s;
  const l = readNumber(data, s.end);
  if (typeof l === 'string') return l;
  const payloadEnd = l.end + l.value;
  if (data.length <= payloadEnd) return 'incomplete';
  if (data[payloadEnd] !== 0x07) return 'malformed';
  return { marker: { status: s.value, payload: Buffer.from(data.subarray(l.end, payloadEnd)) }, end: payloadEnd + 1 };
}

function readNumber(data: Buffer, at: number): 'incomplete' | 'malformed' | { value: number; end: number } {
  const semi = data.indexOf(0x3b, at);
  if (semi < 0) return data.length - at > 11 ? 'malformed' : 'incomplete';
  const text = data.subarray(at, semi).toString('latin1');
  if (!DIGITS.test(text)) return 'malformed';
  return { value: Number(text), end: semi + 1 };
}
