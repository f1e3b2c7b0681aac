/**
 * Dangerous commands (Codex `dangerous_command_match`, newest, §3.2): a forced `rm`, also behind `sudo`.
 * Script forms are handled by the caller over every literal command (never to prove safety).
 */
export type DangerKind = 'ForcedRm' | 'Other';

/** The danger of one argv as exec'd, or null. The program is matched by basename (`/bin/rm` too). */
export function dangerousCommand(argv: readonly string[]): DangerKind | null {
  const prog = argv[0];
  if (prog === undefined) return null;
  const base = prog.slice(prog.lastIndexOf('/') + 1);
  if (base === 'rm') return rmHasForceFlag(argv.slice(1)) ? 'ForcedRm' : null;
  if (prog === 'sudo') return dangerousCommand(argv.slice(1));
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
