/**
 * gate-sh: a bash that asks first. Parse bash's flags, read the script, then run the call through gate-sh's
 * one run machine (src/exec/run-call.ts: ask the daemon about every subcommand in one `preflight` request,
 * run the exact checked script under the real bash with inherited stdio, report run-finished, offer the
 * on-failure rerun), with the plan built here (src/exec/local-planner.ts) and run here (nodeRunner). Fail
 * closed: any Deny, no daemon, a protocol error or a timeout → nothing runs, exit 126.
 *
 * Hot path: no yargs, no parser, no schema library. Never touch process.stdout/stderr/stdin here: creating
 * those streams can make the shared descriptors non-blocking, which the child would inherit.
 */
import { isUtf8 } from 'node:buffer';
import { readBytes } from '../text/index.js';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import {
  ArgsError,
  checkPermissionPaths,
  endAsRun,
  EscalationArgsError,
  escalationFields,
  type EscalationFields,
  EXIT_DENIED,
  inheritedFds,
  type LocalPlan,
  localPlanner,
  parseShellArgs,
  preflightOf,
  readsStartUpFiles,
  runCall,
  type Runner,
  runPlan,
  sandboxAtMost,
  type ShellInvocation,
  startUpRequest,
  TAIL_BYTES,
  USAGE,
  utf8Tail,
} from '../exec/index.js';
import { type Outgoing, RequestError } from '../transport/index.js';
import { gatePaths, type GatePaths, STOP_NOTE_FILE } from '../paths/index.js';
import type { SandboxPolicy } from '../sandbox/index.js';
import { CALL_TEXTS, fill } from '../protocol/index.js';

export { EXIT_DENIED };

function say(line: string): void {
  try {
    writeSync(2, `${CALL_TEXTS.prefix}${line}\n`);
  } catch {
    // stderr closed: the exit status still says it
  }
}

export async function main(argv: string[]): Promise<void> {
  let code: number;
  try {
    // handed over by the native gate-sh (shims/gate-sh-native.c): $0 is the name it was started as
    const argv0 = process.env.GATE_SH_ARGV0 ?? process.argv[1] ?? 'gate-sh';
    delete process.env.GATE_SH_ARGV0;
    code = await gateSh(argv, process.env, argv0);
  } catch (e) {
    say(fill(CALL_TEXTS.internalError, (e as Error).message)); // fail closed, never a stack trace
    code = EXIT_DENIED;
  }
  endAsRun(code);
  process.exit(code);
}

/** Everything but the exit: returns the exit status. */
export async function gateSh(argv: string[], env: Record<string, string | undefined>, argv0: string): Promise<number> {
  const fds = inheritedFds(); // before gate-sh opens any descriptor of its own
  let inv: ShellInvocation;
  try {
    inv = parseShellArgs(argv, argv0);
  } catch (e) {
    if (!(e instanceof ArgsError)) throw e;
    say(`${e.message}\n${USAGE}`);
    return 2;
  }
  if (inv.info) {
    const { version } = await import('./version.js');
    const line = `gate-sh ${version()} (a gated GNU bash)\n`;
    writeSync(1, inv.info === 'version' ? line : `${line}${USAGE}\n`);
    return 0;
  }

  if (inv.source.kind === 'stdin' && (inv.interactive || (isatty(0) && isatty(2)))) return interactive(inv, env);

  let script: string;
  /** the script's bytes when they are not UTF-8 (text is then their faithful reading, raw-bytes.ts): bash runs exactly these */
  let scriptBytes: Buffer | undefined;
  try {
    const read = readScript(inv, argv);
    if (read.binary) {
      // bash's own check of a script file (check_binary_file): a NUL on its first line; bash's words, unprefixed
      try {
        writeSync(2, `${read.binary}: ${read.binary}: cannot execute binary file\n`);
      } catch {
        // stderr closed: the exit status says it
      }
      return 126;
    }
    script = read.text;
    scriptBytes = read.bytes;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (inv.source.kind === 'file') {
      say(`${inv.source.path}: ${err.code === 'ENOENT' ? 'No such file or directory' : err.code === 'EISDIR' ? 'Is a directory' : err.message}`);
      return err.code === 'ENOENT' ? 127 : 126;
    }
    say(`cannot read the script from stdin: ${err.message}`);
    return EXIT_DENIED;
  }

  let paths: GatePaths;
  try {
    paths = gatePaths(env);
  } catch (e) {
    say((e as Error).message);
    return EXIT_DENIED;
  }
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch (e) {
    // decisions and the sandbox are about where the script runs: nothing can be decided about a folder that is gone
    say(fill(CALL_TEXTS.nothingRan, `the current folder cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}: removed, or out of reach)`));
    return EXIT_DENIED;
  }
  let asked: EscalationFields & { sandbox_at_most?: SandboxPolicy };
  try {
    asked = escalationFields(inv.escalation, cwd, env.HOME ?? '/');
    checkPermissionPaths(asked, existsSync);
    if (inv.sandbox !== undefined) asked.sandbox_at_most = sandboxAtMost(inv.sandbox, cwd, env.HOME ?? '/');
  } catch (e) {
    if (!(e instanceof EscalationArgsError)) throw e;
    say(fill(CALL_TEXTS.nothingRan, e.message));
    return 2;
  }
  // bash will read start-up files (a login profile, BASH_ENV): ask for a start-up phase (docs/startup-phase.md)
  const pty = inv.pty ?? (isatty(0) && isatty(1));
  const wantsStartUp = !pty && readsStartUpFiles(inv, env);
  const startUp = wantsStartUp ? startUpRequest(paths.approvalDir, env) : undefined;
  const preflight: Outgoing = {
    ...preflightOf(inv.login, script, cwd),
    ...asked,
    ...(startUp ? { start_up: startUp } : {}),
    ...settingsOf(env),
    // bytes that are not UTF-8 travel as base64 (src/protocol/exec-gate-wire.ts); the daemon decides on a
    // reading where each bad byte is U+FFFD (never a shell metacharacter: the parse holds)
    ...(scriptBytes ? { encoding: 'base64', script: scriptBytes.toString('base64'), cwd: Buffer.from(cwd, 'utf8').toString('base64') } : {}),
  };
  // a turn-sandbox attempt's stderr, seen without changing what the caller gets (only plans that offer the rerun use it)
  const relay = pty ? null : stderrRelay();
  const planner = localPlanner({
    request: preflight,
    input: { invocation: inv, script, scriptBytes, env, cwd, inheritedFds: fds },
    pty,
    relay: relay !== null,
    // the new daemon wrote a new start-up key
    restarted: () => void (wantsStartUp && Object.assign(preflight, { start_up: startUpRequest(paths.approvalDir, env) })),
    env,
  });
  return runCall({ paths, planner, runner: nodeRunner(paths, env, relay), say, autostart: async () => void (await autostart(env)) });
}

/** How the Node gate-sh runs a plan: with the caller's own stdio (stderr relayed or read back when the
 * rerun needs its tail), or hosted in a PTY; a forced daemon stop says why a first attempt ended. */
function nodeRunner(paths: GatePaths, env: Record<string, string | undefined>, relay: Relay): Runner<LocalPlan> {
  return {
    run: async ({ plan, pty }, r) => {
      const since = Date.now();
      if (pty) {
        const { runPlanInPty } = await import('../terminal/pty-host.js');
        const started = performance.now();
        const status = await runPlanInPty(plan, env);
        if (status !== 0) sayStopNote(paths, since);
        return { status, ms: performance.now() - started };
      }
      const kept = r.keepTail ? relay : null;
      // `> f 2>&1`: nothing relayed; what the run wrote to the file is read back afterwards
      const backFrom = kept === 'read-back' ? fileSize(2) : undefined;
      const piped = kept === 'separate' || kept === 'merged' ? { stderrTail: TAIL_BYTES, merged: kept === 'merged' } : {};
      const result = await runPlan(plan, { ...piped, startUp: r.startUp });
      if (result.status !== 0 && !r.again) sayStopNote(paths, since);
      return { status: result.status, ms: result.durationMs, tail: backFrom !== undefined ? readBackTail(backFrom) : result.stderrTail };
    },
  };
}

type Relay = 'separate' | 'merged' | 'read-back' | null;

/**
 * How to see a sandbox denial (for the on-failure rerun) without changing what the caller gets: a stderr
 * of its own is relayed as it comes; a stderr that is stdout (`2>&1`) into a pipe, a socket or /dev/null
 * is relayed through one shared pipe (the interleaving stays as written, and the caller's reader waits for
 * every writer anyway); `2>&1` into a file (Claude Code's shell) is read back from the file after the run,
 * never relayed (a background job could outlive gate-sh there, and a relay would hold it); never a
 * terminal (programs check isatty). As shims/gate-sh-native.c's stderr_relay.
 */
function stderrRelay(): Relay {
  if (isatty(2)) return null;
  try {
    const out = fstatSync(1);
    const err = fstatSync(2);
    if (!(out.dev === err.dev && out.ino === err.ino)) return 'separate';
    if (out.isFIFO() || out.isSocket()) return 'merged';
    if (out.isCharacterDevice() && out.rdev === statSync('/dev/null').rdev) return 'merged';
    return out.isFile() ? 'read-back' : null;
  } catch {
    return null;
  }
}

function fileSize(fd: number): number | undefined {
  try {
    return fstatSync(fd).size;
  } catch {
    return undefined;
  }
}

/** The last TAIL_BYTES written to stderr's file since it was `from` bytes long (opened again to read:
 * `> f` opens it write-only). */
function readBackTail(from: number): string {
  try {
    const end = fstatSync(2).size;
    if (end <= from) return '';
    const start = Math.max(from, end - TAIL_BYTES);
    const buf = Buffer.alloc(end - start);
    const fd = openSync('/proc/self/fd/2', 'r');
    try {
      return utf8Tail(buf.subarray(0, readSync(fd, buf, 0, buf.length, start)));
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

/**
 * The script as bash would read it: its text, and its bytes when they are not UTF-8 (bash runs exactly those;
 * the text, each bad byte read as U+FFFD, is what the daemon parses). NUL bytes are dropped as bash drops
 * them from a script it reads; a script file with a NUL on its first line is refused as bash refuses it
 * (`binary`: its path).
 */
function readScript(inv: ShellInvocation, argv: string[]): { text: string; bytes?: Buffer; binary?: string } {
  if (inv.source.kind === 'command') {
    const text = inv.source.script;
    // Node read its arguments as UTF-8, each bad byte as U+FFFD: the very bytes are in /proc/self/cmdline
    return text.includes('\uFFFD') ? asRead(argBytes(argv, text) ?? Buffer.from(text, 'utf8')) : { text };
  }
  if (inv.source.kind === 'file') {
    const data = readFileSync(inv.source.path);
    const head = data.subarray(0, 80);
    const nul = head.indexOf(0);
    if (nul >= 0 && !head.subarray(0, nul).includes(10)) return { text: '', binary: inv.source.path };
    return asRead(data);
  }
  // the whole script must be known before anything runs, so stdin is read to its end first
  for (;;) {
    try {
      return asRead(readFileSync(0));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

function asRead(data: Buffer): { text: string; bytes?: Buffer } {
  const bytes = data.includes(0) ? Buffer.from(data.filter((b) => b !== 0)) : data;
  return isUtf8(bytes) ? { text: bytes.toString('utf8') } : { text: readBytes(bytes), bytes };
}

/** The raw bytes of the argument that Node decoded as `text` (the last argv.length entries of the cmdline). */
function argBytes(argv: string[], text: string): Buffer | undefined {
  try {
    const words = splitNul(readFileSync('/proc/self/cmdline'));
    const mine = words.slice(words.length - argv.length);
    if (mine.length !== argv.length) return undefined;
    const i = argv.indexOf(text);
    return i >= 0 && mine[i].toString('utf8') === text ? mine[i] : undefined;
  } catch {
    return undefined;
  }
}

function splitNul(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (let i = b.indexOf(0); i >= 0; i = b.indexOf(0, from)) {
    out.push(b.subarray(from, i));
    from = i + 1;
  }
  return out;
}

/** A run ended by a forced daemon stop says why: the daemon's note in the session folder, written since the run began. */
function sayStopNote(paths: GatePaths, since: number): void {
  try {
    const note = join(paths.sessionDir, STOP_NOTE_FILE);
    if (statSync(note).mtimeMs < since - 1000) return;
    say(readFileSync(note, 'utf8').trim());
  } catch {
    // no note: the run ended for its own reasons
  }
}

/** The session settings the caller's environment names, for the daemon to apply or refuse (never ignore). */
function settingsOf(env: Record<string, string | undefined>): { settings?: Record<string, string> } {
  const settings: Record<string, string> = {};
  for (const name of ['GATE_SANDBOX_MODE', 'GATE_APPROVAL_POLICY', 'GATE_SECRETS_HIDE', 'GATE_SECRETS_SHOW']) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '') settings[name] = v;
  }
  return Object.keys(settings).length ? { settings } : {};
}

/** Start the daemon in the background unless turned off (ensureDaemon says so); true when it now answers. */
async function autostart(env: Record<string, string | undefined>): Promise<boolean> {
  // Inside a gated run the caller's environment is the script's to choose: a daemon started from it
  // could carry a weaker approval or sandbox policy (GATE_APPROVAL_POLICY, GATE_SANDBOX_MODE, ...).
  if (env.GATE_RUN)
    throw new RequestError(
      'not-running',
      `the gate daemon for this session is not running, and gate-sh does not start one from inside a gated run (GATE_RUN=${env.GATE_RUN}); start it with 'gate daemon start'`,
    );
  try {
    const { ensureDaemon } = await import('../client/autostart.js');
    await ensureDaemon(env);
    return true;
  } catch (e) {
    throw new RequestError('not-running', (e as Error).message);
  }
}

/** Interactive use (no script, a terminal on stdin): a gated REPL hosted in a PTY (src/terminal/interactive.ts). */
async function interactive(inv: ShellInvocation, env: Record<string, string | undefined>): Promise<number> {
  const { runInteractive } = await import('../terminal/interactive.js');
  return runInteractive({ invocation: inv, env });
}
