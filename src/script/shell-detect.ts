/**
 * Which argv are shell invocations, Codex parity (docs/codex-parity.md §2.1): shells are recognised by
 * exact string only (`/tmp/bash` is not a shell), and only the exact form [shell, -c|-lc, script].
 */
export type ShellKind = 'bash' | 'zsh' | 'sh';

const SHELLS: Record<string, ShellKind> = {
  bash: 'bash', '/bin/bash': 'bash', '/usr/bin/bash': 'bash', '/usr/local/bin/bash': 'bash', '/opt/homebrew/bin/bash': 'bash',
  zsh: 'zsh', '/bin/zsh': 'zsh', '/usr/bin/zsh': 'zsh', '/usr/local/bin/zsh': 'zsh', '/opt/homebrew/bin/zsh': 'zsh',
  sh: 'sh', '/bin/sh': 'sh', '/usr/bin/sh': 'sh',
};

export function detectShell(program: string): ShellKind | null {
  return Object.hasOwn(SHELLS, program) ? SHELLS[program] : null;
}

/** A nested shell: `bash -c SCRIPT` (or `-lc`, zsh, sh) as a script runs it (glossary: nested shell). */
export interface NestedShell {
  shell: string;
  kind: ShellKind;
  flag: '-c' | '-lc';
  script: string;
}

/** Exactly [shell, -c|-lc, script]; anything else (extra args, `-l -c`, `-cl`) is not a nested shell. */
export function nestedShell(argv: string[]): NestedShell | null {
  if (argv.length !== 3) return null;
  const [shell, flag, script] = argv;
  const kind = detectShell(shell);
  if (!kind || (flag !== '-c' && flag !== '-lc')) return null;
  return { shell, kind, flag, script };
}
