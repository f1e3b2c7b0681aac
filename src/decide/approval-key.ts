/**
 * The session-approval cache key (Codex §2.6 newest + §6.3, DESIGN): shell + canonical command + cwd +
 * requested permissions (+ the execution mode), as one stable string. Approving an escalated run never
 * approves a different permission request, and the same command in another cwd prompts again.
 */
import type { EscalationExecution, SandboxPermissions } from '../protocol/index.js';
import type { PermissionProfile } from '../sandbox/index.js';
import { nestedShell, parseShellLcPlainCommands } from '../script/index.js';

export const SHELL_SCRIPT_MARKER = '__codex_shell_script__';

/**
 * A shell `-c|-lc` script that is exactly one plain command → that command's words; another script →
 * `[marker, shell, flag, script]` (the shell path stays: it is attacker-choosable); else the argv.
 */
export function canonicalizeCommandForApproval(argv: readonly string[]): string[] {
  const plain = parseShellLcPlainCommands([...argv]);
  if (plain && plain.length === 1) return [...plain[0]];
  const inv = nestedShell([...argv]);
  if (inv) return [SHELL_SCRIPT_MARKER, argv[0], argv[1], argv[2]];
  return [...argv];
}

export interface ApprovalKeyInput {
  /** The command as asked about (a subcommand's argv, an exec's `[program, argv[1..]]`, or a shell argv). */
  command: readonly string[];
  cwd: string;
  /** The shell that runs it, when it is a subcommand of a gated script (e.g. `/bin/bash`). */
  shell?: string;
  sandboxPermissions: SandboxPermissions;
  additionalPermissions?: PermissionProfile;
  execution?: EscalationExecution;
}

/** Sorted keys at every level, arrays kept in order: equal inputs give equal strings. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => [k, stable(o[k])]));
  }
  return v;
}

function normalizeProfile(p: PermissionProfile | undefined): unknown {
  if (!p) return null;
  const uniq = (xs: string[] | undefined) => (xs ? [...new Set(xs)].sort() : undefined);
  return { network: p.network ?? false, file_system: { read: uniq(p.file_system?.read) ?? [], write: uniq(p.file_system?.write) ?? [] } };
}

export function approvalKey(i: ApprovalKeyInput): string {
  return JSON.stringify(
    stable({
      shell: i.shell ?? null,
      command: canonicalizeCommandForApproval(i.command),
      cwd: i.cwd,
      sandbox_permissions: i.sandboxPermissions,
      additional_permissions: normalizeProfile(i.additionalPermissions),
      execution: i.execution
        ? i.execution.type === 'Permissions'
          ? { type: 'Permissions', profile: normalizeProfile(i.execution.profile) }
          : i.execution
        : null,
    }),
  );
}
