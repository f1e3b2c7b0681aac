/**
 * Answers handed to a run's supervisor up front (docs/exec-gate.md, "Answers handed
 * over up front"). A Run that holds for any argv of one program (src/decide/reuse.ts, reusableForAnyArgv) is
 * given to a run's supervisor the first time that run asks about the program: a build pays one daemon round
 * trip per program per run (sed, cat, expr, gcc, cc1, as, ld ...), though the answer is the same in every run
 * of the session. So the daemon remembers which programs got such an answer lately (ReuseGrants.offer) and,
 * with a run's second such answer, decides each of them afresh for that run, exactly as an exec of it would be
 * decided there (the same request but program and argv[0]), and hands the ones that still hold any argv over
 * with their grants: nothing is carried from one run to another but the list of names to try. A grant scoped
 * to a program's process comes with the other programs given such a grant lately, decided as that exec's
 * process's exec of each would be, and held below the same process only (ReuseGrants.offerScoped); a run's
 * first one brings the any-argv ones as well (docs/exec-gate.md, "Answers handed over up front").
 * Not pure: reads the files (identity and symlinks) as the supervisor would.
 * Trust boundary: the file is known by what the daemon reads through the exec'ing process's root
 * (/proc/<pid>/root), before and after deciding; the supervisor reuses a preset only for an exec of that very
 * file (device, inode, size, modification and change times), as for any grant.
 */
import { closeSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import type { ReusePreset, ReuseScope } from '../protocol/index.js';
import { ownFilesByName } from '../decide/index.js';

/** At most this many are handed over at once (one datagram carries them with the reply). */
export const MAX_PRESETS = 64;

/** The file at path as stat(2) (following links) sees it, in ReusePreset's `file` form; undefined when unreadable. */
export function fileIdentity(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    if (!s.isFile()) return undefined;
    const sec = (ns: bigint) => `${ns / 1_000_000_000n} ${ns % 1_000_000_000n}`;
    return `${s.dev} ${s.ino} ${s.size} ${sec(s.mtimeNs)} ${sec(s.ctimeNs)}`;
  } catch {
    return undefined;
  }
}

/** The program's real path when it is itself a symlink, as the supervisor sends it (gate-request.c): a rule
 * about the real program applies too. */
export function realProgramOf(program: string): string | undefined {
  try {
    if (!lstatSync(program).isSymbolicLink()) return undefined;
    const real = realpathSync(program);
    return real !== program ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The presets for programs, decided for the process hostPid's exec (its root is where each file is read; none:
 * the daemon's own, for a run that has no process yet, at pre-flight):
 * `holds` decides one program as an exec of it with its own name would be (its real path, the file the
 * daemon reads for it and that file's identity as read before given) and says whether that answer holds for
 * any argv with the same audit fields as the answer it comes with ('known': it does, and the file's identity
 * needs no reading again: the answer was remembered for a file of that identity, PresetMemo, or it was read); `grant` makes its grant. A file that changed
 * while it was decided is left out.
 * `scope`: each preset holds only below that process (the reply's own scoped grant's, which `holds` checked).
 */
export function presetsFor(
  programs: readonly string[],
  hostPid: number | undefined,
  holds: (program: string, realProgram: string | undefined, programFile: string, file: string) => boolean | 'known',
  grant: (program: string) => string,
  scope?: ReuseScope,
): ReusePreset[] {
  const out: ReusePreset[] = [];
  for (const program of programs) {
    if (out.length >= MAX_PRESETS) break;
    if (!program.startsWith('/') || program.includes('\n')) continue;
    const programFile = hostPid === undefined ? program : `/proc/${hostPid}/root${program}`;
    const before = fileIdentity(programFile);
    if (before === undefined) continue;
    // (read once: a link pointed elsewhere meanwhile names another file, which the identity read again tells)
    const real = realProgramOf(program);
    // ('known': held, the file's identity needing no reading again: by an answer remembered for a file of
    // that identity (PresetMemo), or read again already)
    const held = holds(program, real, programFile, before);
    if (held === false || (held !== 'known' && fileIdentity(programFile) !== before)) continue;
    out.push({
      program,
      grant: grant(program),
      file: before,
      ...(ownFilesByName(program, real ?? program) ? { below_program: true as const } : {}),
      ...(scope ? { scope } : {}),
    });
  }
  return out;
}

/** An any-argv answer as a preset needs it: whether it holds for any argv, and its audit fields. */
export interface AnyArgvAnswer {
  reusable: boolean;
  source: string;
  decision: string;
}

/** Answers remembered at most (the oldest forgotten first). */
const MAX_MEMO = 4096;

/**
 * The any-argv answers decided lately for presets, so that a later build's run does not decide its 64
 * programs afresh (each a read of the file's head, a stat to know it by its bytes, two stats around it): the
 * answer for a program is remembered by everything such a decision (decider.exec with no ancestry, not
 * scoped: the daemon's `holdsAny`) reads, so that the same key can only give the same answer:
 * - the decider (the policy loaded: `use` forgets everything when it is another) and what knowing a program
 *   by its bytes reads besides the file (ProgramIdentity.state: the named programs and their files now);
 * - the request's fields the decision reads (program, argv: its name alone, cwd, env, real_program) and the
 *   context's (approval policy, the run's sandbox, git read-only, sandbox permissions, additional
 *   permissions, writable folders, the pre-flight settlement of that argv) — `context` and `key`;
 * - the file: its identity (device, inode, size, modification and change times, as fileIdentity reads it
 *   through the exec'ing process's root), which stands for its bytes (its `#!` head, its fingerprint)
 *   exactly as far as the supervisor's own reuse of the preset trusts it; and the program's symlink target
 *   as read now (realProgramOf, part of the key).
 * The request's other fields (id, pid, host_pid, layer, pair_run, run_id, the path the file is read by) are
 * not read by such a decision (src/decide/decider.ts `exec`: the program file only through the head and
 * identity reads above; no ancestry, so no /proc). A program whose name puts it under a skill's scripts/
 * folder is decided by files the key does not name: never remembered. An answer that holds is remembered
 * only when the file's head was read and is no `#!` line (a file unreadable then is no script to the
 * decision, which remembered would outlast the failure). Not remembering an answer only costs a decision.
 */
export class PresetMemo {
  private decider?: object;
  private state = '';
  private readonly answers = new Map<string, AnyArgvAnswer>();
  hits = 0;
  misses = 0;

  /** Answers hold for this decider and known-programs state only: forgotten when either is another. */
  use(decider: object, state: string): void {
    if (decider === this.decider && state === this.state) return;
    this.decider = decider;
    this.state = state;
    this.answers.clear();
  }

  /** contexts seen lately (their JSON text), each by a number never given to another */
  private readonly contexts = new Map<string, string>();
  private contextsSeen = 0;

  /** The context's part of the key (once per hand-over): a short name for its text, so that each program's
   * key is not a copy of it. */
  context(
    req: { cwd: string; env?: Record<string, string> },
    ctx: { [K in 'approvalPolicy' | 'sandboxPolicy' | 'gitReadOnly' | 'sandboxPermissions' | 'additionalPermissions' | 'writable']?: unknown },
  ): string {
    const { approvalPolicy, sandboxPolicy, gitReadOnly, sandboxPermissions, additionalPermissions, writable } = ctx;
    const permissions = [sandboxPermissions, additionalPermissions ?? null];
    const text = JSON.stringify([req.cwd, req.env ?? null, approvalPolicy, sandboxPolicy, gitReadOnly, ...permissions, writable ?? null]);
    let name = this.contexts.get(text);
    if (name === undefined) {
      // (forgotten past 256: its answers are then never found again, and go with the oldest)
      if (this.contexts.size >= 256) this.contexts.delete(this.contexts.keys().next().value!);
      name = `c${++this.contextsSeen}`;
      this.contexts.set(text, name);
    }
    return name;
  }

  /** The key of one program's answer; undefined: never remembered. */
  static key(context: string, program: string, realProgram: string | undefined, file: string, settled: unknown): string | undefined {
    if (program.includes('/scripts/') || realProgram?.includes('/scripts/')) return undefined;
    // (a NUL in neither name, and none in an identity or JSON text: the parts cannot run into each other)
    if (program.includes('\0') || realProgram?.includes('\0')) return undefined;
    return `${context}\0${program}\0${realProgram ?? ''}\0${file}\0${settled === undefined ? '' : JSON.stringify(settled)}`;
  }

  get(key: string | undefined): AnyArgvAnswer | undefined {
    const a = key === undefined ? undefined : this.answers.get(key);
    if (a) this.hits++;
    else this.misses++;
    return a;
  }

  /** Remembers an answer just decided for programFile, whose identity was `file` before: only when it still
   * is (read again here, after the head of a held one: see the class's comment); says whether it is. */
  set(key: string | undefined, answer: AnyArgvAnswer, programFile: string, file: string): boolean {
    const head = key !== undefined && (!answer.reusable || plainHead(programFile));
    if (fileIdentity(programFile) !== file) return false;
    if (!head) return true;
    this.answers.set(key!, answer);
    if (this.answers.size > MAX_MEMO) this.answers.delete(this.answers.keys().next().value!);
    return true;
  }
}

/** Whether the file's first bytes can be read and are no `#!` line. */
function plainHead(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(2);
    const n = readSync(fd, buf, 0, 2, 0);
    return !(n === 2 && buf[0] === 0x23 && buf[1] === 0x21);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
