/**
 * The client's half of the start-up phase (design in docs/startup-phase.md). gate-sh, outside
 * the sandbox, asks the daemon for a start-up phase with a key only it can read, and marks the phase's end
 * itself: bash gets the script with a one-line prefix of builtins that tells gate-sh "start-up files read"
 * on one pipe and then waits for gate-sh's go on another. gate-sh ends the phase at the daemon first and
 * only then says go, so by the time bash reads the script's first command every exec of the run is decided
 * as the script's. The script cannot forge the end: it is not running before the prefix, and a run id in
 * its environment buys nothing once the phase is over (it never comes back).
 *
 * Trust boundary: this file runs in gate-sh (outside); the prefix runs in bash (inside), before the script.
 */
import { closeSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Socket } from 'node:net';
import type { ShellInvocation } from './gate-sh-args.js';
import type { StartUpFds, StartUpRequest } from '../protocol/index.js';
import { RUNTIME_LAYOUT } from '../paths/index.js';

/** The daemon's key file in the approval folder (never visible inside a sandbox; src/daemon/start-up.ts). */
const KEY_FILE = RUNTIME_LAYOUT.startUpKey;

/** Whether bash will read start-up files for this non-interactive run, and the prefix can be traced-free. */
export function readsStartUpFiles(inv: ShellInvocation, env: Record<string, string | undefined>): boolean {
  if (inv.interactive) return false;
  const profile = inv.login && !inv.longOptions.includes('--noprofile');
  if (!profile && !env.BASH_ENV) return false;
  // -x / -v would show the prefix (xtrace, verbose): those runs keep the strict start-up
  const opts = inv.setOptions;
  for (let i = 0; i < opts.length; i++) {
    const o = opts[i];
    if (o === '-o' && (opts[i + 1] === 'xtrace' || opts[i + 1] === 'verbose')) return false;
    if (o === '-x' || o === '-v') return false;
  }
  if (/(^|:)(xtrace|verbose)(:|$)/.test(env.SHELLOPTS ?? '')) return false;
  return true;
}

/** The start-up request, or undefined when the key cannot be read (no phase: the strict start-up). */
export function startUpRequest(approvalDir: string, env: Record<string, string | undefined>): StartUpRequest | undefined {
  let key: string;
  try {
    key = readFileSync(join(approvalDir, KEY_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  return startUpFields(key, env);
}

/** The start-up request for a key the client read (the native gate-sh sends its key with its plan request). */
export function startUpFields(key: string, env: Record<string, string | undefined>): StartUpRequest {
  const functions = Object.keys(env).filter((k) => k.startsWith('BASH_FUNC_'));
  const r: StartUpRequest = { key, functions };
  if (env.HOME) r.home = env.HOME;
  if (env.BASH_ENV) r.bash_env = env.BASH_ENV;
  if (env.TMPDIR) r.tmpdir = env.TMPDIR;
  return r;
}

/** Descriptor numbers (as bash sees them) of the two pipes: a wire type (src/protocol/plan.ts). */
export type { StartUpFds };

/**
 * The prefix, on the script's first line (line numbers hold). Builtins only, so nothing of it is exec'd;
 * a missing go (gate-sh could not end the phase) ends bash before the script: 126, as a denial. The two
 * descriptors are closed by `command exec`: bash makes an `exec`'s redirections the shell's own only when
 * the command is `exec` itself or `command exec`; under `builtin exec` they are undone when it returns, and
 * until 2026-11 both pipes stayed open in bash and in every program of the run (fds 253 and 254 of every
 * process, where bash has none).
 */
export function startUpPrefix(fds: StartUpFds): string {
  return `{ builtin printf . >&${fds.ready}; builtin read -r -N 1 -u ${fds.go} __gate_go || builtin exit 126; builtin unset __gate_go; command exec ${fds.ready}>&- ${fds.go}<&-; }; `;
}

/**
 * gate-sh's side, once bash is started: on bash's byte, end the phase (`endPhase`, a daemon round trip),
 * then write go. If bash ends before (a profile that exits, a syntax error) nothing is sent. If ending the
 * phase fails, go is never written: bash exits 126 before the script, and `onError` says why.
 */
export function watchStartUp(readyRead: number, goWrite: number, endPhase: () => Promise<void>, onError: (e: Error) => void): void {
  const ready = new Socket({ fd: readyRead, readable: true, writable: false });
  let done = false;
  const close = (): void => {
    if (done) return;
    done = true;
    ready.destroy();
    try {
      closeSync(goWrite);
    } catch {
      // already closed
    }
  };
  let got = false;
  ready.once('data', () => {
    got = true;
    endPhase().then(
      () => {
        try {
          writeSync(goWrite, '.');
        } catch {
          // bash is gone
        }
        close();
      },
      (e: Error) => {
        onError(e);
        close();
      },
    );
  });
  ready.once('end', () => (got ? undefined : close()));
  ready.once('error', close);
}
