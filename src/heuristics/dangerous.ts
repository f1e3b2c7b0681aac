/**
 * Dangerous commands (Codex `dangerous_command_match`, newest, §3.2): a forced `rm`, also behind `sudo`.
 * Script forms are handled by the caller over every literal command (never to prove safety).
 * With the historic git rules opted in (`--git-read-only`), `git reset`, `git rm` and `git --force`
 * (as the first argument) are dangerous too, as in historic Codex.
 */
export type DangerKind = 'ForcedRm' | 'Other';

export interface DangerOptions {
  historicGit?: boolean;
}

/** Whether dangerousCommand can say anything of a program whose path is this (its arguments decide): the
 * exec gate's reuse of answers (src/decide/reuse.ts) leaves these programs to be decided every time. */
export function dangerLooksAt(program: string): boolean {
  const base = program.slice(program.lastIndexOf('/') + 1);
  return base === 'rm' || base === 'sudo' || program.endsWith('git');
}

/** The danger of one argv as exec'd, or null. The program is matched by basename (`/bin/rm` too). */
export function dangerousCommand(argv: readonly string[], opts: DangerOptions = {}): DangerKind | null {
  const prog = argv[0];
  if (prog === undefined) return null;
  const base = prog.slice(prog.lastIndexOf('/') + 1);
  if (base === 'rm') return rmHasForceFlag(argv.slice(1)) ? 'ForcedRm' : null;
  if (prog === 'sudo') return dangerousCommand(argv.slice(1), opts);
  if (opts.historicGit && prog.endsWith('git') && ['reset', 'rm', '--force'].includes(argv[1] ?? '')) return 'Other';
  return null;
}

function rmHasForceFlag(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--force') return true;
    if (a.startsWith('-') && !a.startsWith('--') && a.slice(1).includes('f')) return true;
  }
  return false;
}
