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
import { lstatSync, realpathSync, statSync } from 'node:fs';
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
 * The presets for programs, decided for the process hostPid's exec (its root is where each file is read):
 * `holds` decides one program as an exec of it with its own name would be (its real path and the file the
 * daemon reads for it given) and says whether that answer holds for any argv with the same audit fields as
 * the answer it comes with; `grant` makes its grant. A file that changed while it was decided is left out.
 * `scope`: each preset holds only below that process (the reply's own scoped grant's, which `holds` checked).
 */
export function presetsFor(
  programs: readonly string[],
  hostPid: number,
  holds: (program: string, realProgram: string | undefined, programFile: string) => boolean,
  grant: (program: string) => string,
  scope?: ReuseScope,
): ReusePreset[] {
  const out: ReusePreset[] = [];
  for (const program of programs) {
    if (out.length >= MAX_PRESETS) break;
    if (!program.startsWith('/') || program.includes('\n')) continue;
    const programFile = `/proc/${hostPid}/root${program}`;
    const before = fileIdentity(programFile);
    if (before === undefined) continue;
    // (read once: a link pointed elsewhere meanwhile names another file, which the identity read again tells)
    const real = realProgramOf(program);
    if (!holds(program, real, programFile) || fileIdentity(programFile) !== before) continue;
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
