/**
 * A caller's per-call escalation (`gate-sh --escalate`, `--with-permissions JSON`, `--justification TEXT`)
 * → the pre-flight's `sandbox_permissions`, `additional_permissions` and `justification` (Codex's shell
 * tool parameters). Pure. Paths in the profile are resolved against the caller's cwd and normalised; `~`
 * is the home folder; asking to write `/` is refused (that is no sandbox: use --escalate and let a person
 * decide). The daemon still decides: asking is never granting. `--sandbox MODE|JSON` (the call's sandbox at
 * most) → `sandbox_at_most`, its writable roots resolved the same way.
 */
import { posix } from 'node:path';
import { parseSandboxPolicy, type PermissionProfile, type SandboxPolicy, SandboxPolicyError } from '../sandbox/index.js';
import type { SandboxPermissions } from '../protocol/index.js';

export interface EscalationArgs {
  escalate?: boolean;
  withPermissions?: string;
  justification?: string;
}

export interface EscalationFields {
  sandbox_permissions: SandboxPermissions;
  additional_permissions?: PermissionProfile;
  justification?: string;
}

export class EscalationArgsError extends Error {}

/** A --with-permissions path the sandbox could not bind (`exists` says false): it would fail only after a
 * person approved the request, so it is refused before anyone is asked. */
export function checkPermissionPaths(fields: EscalationFields, exists: (p: string) => boolean): void {
  const fsPaths = fields.additional_permissions?.file_system;
  for (const p of [...(fsPaths?.read ?? []), ...(fsPaths?.write ?? [])])
    if (!exists(p)) throw new EscalationArgsError(`--with-permissions: '${p}' does not exist (create it first)`);
}

function paths(v: unknown, what: string, cwd: string, home: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((p) => typeof p !== 'string' || p === ''))
    throw new EscalationArgsError(`--with-permissions: file_system.${what} must be a list of paths`);
  const out = (v as string[]).map((p) => {
    const abs = p === '~' || p.startsWith('~/') ? posix.join(home, p.slice(1)) : posix.resolve(cwd, p);
    const n = posix.normalize(abs).replace(/(.)\/+$/, '$1');
    if (what === 'write' && n === '/')
      throw new EscalationArgsError(`--with-permissions: write access to '/' is not a sandbox; name specific folders, or use --escalate`);
    return n;
  });
  return [...new Set(out)];
}

export function parseProfileArg(json: string, cwd: string, home: string): PermissionProfile {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new EscalationArgsError(
      `--with-permissions: not JSON (${(e as Error).message}); expected {"network":false,"file_system":{"read":[...],"write":[...]}}`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new EscalationArgsError('--with-permissions: expected an object with network and file_system');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'network' && k !== 'file_system') throw new EscalationArgsError(`--with-permissions: unknown key '${k}' (network, file_system)`);
  if (o.network !== undefined && typeof o.network !== 'boolean') throw new EscalationArgsError('--with-permissions: network must be true or false');
  const profile: PermissionProfile = { network: o.network === true };
  if (o.file_system !== undefined) {
    const f = o.file_system as Record<string, unknown>;
    if (typeof f !== 'object' || f === null || Array.isArray(f))
      throw new EscalationArgsError('--with-permissions: file_system must be an object (read, write)');
    for (const k of Object.keys(f))
      if (k !== 'read' && k !== 'write') throw new EscalationArgsError(`--with-permissions: unknown key 'file_system.${k}' (read, write)`);
    const read = paths(f.read, 'read', cwd, home);
    const write = paths(f.write, 'write', cwd, home);
    if (read || write) profile.file_system = { ...(read ? { read } : {}), ...(write ? { write } : {}) };
  }
  return profile;
}

/** The pre-flight fields for what the caller asked; `use_default` when nothing was. */
export function escalationFields(a: EscalationArgs, cwd: string, home: string): EscalationFields {
  if (a.escalate && a.withPermissions !== undefined)
    throw new EscalationArgsError(
      '--escalate and --with-permissions exclude each other: one asks to leave the sandbox, the other for exactly these permissions',
    );
  const justification = a.justification !== undefined && a.justification.trim() !== '' ? a.justification : undefined;
  if (a.escalate) return { sandbox_permissions: 'require_escalated', ...(justification ? { justification } : {}) };
  if (a.withPermissions !== undefined)
    return {
      sandbox_permissions: 'with_additional_permissions',
      additional_permissions: parseProfileArg(a.withPermissions, cwd, home),
      ...(justification ? { justification } : {}),
    };
  if (justification) throw new EscalationArgsError('--justification goes with --escalate or --with-permissions');
  return { sandbox_permissions: 'use_default' };
}

/** `--sandbox MODE|JSON` → the pre-flight's `sandbox_at_most` (the daemon takes the stricter of it and its own). */
export function sandboxAtMost(text: string, cwd: string, home: string): SandboxPolicy {
  let v: unknown = text;
  if (text.trimStart().startsWith('{')) {
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new EscalationArgsError(`--sandbox: not JSON (${(e as Error).message}); expected a mode (read-only, workspace-write) or a policy object`);
    }
  }
  let p: SandboxPolicy;
  try {
    p = parseSandboxPolicy(v);
  } catch (e) {
    if (e instanceof SandboxPolicyError) throw new EscalationArgsError(`--sandbox: ${e.message}`);
    throw e;
  }
  if (p.type !== 'workspace-write') return p;
  // (a root of `/` is harmless here: what is in force is within gate-sh's own roots)
  const abs = (r: string): string => posix.normalize(r === '~' || r.startsWith('~/') ? posix.join(home, r.slice(1)) : posix.resolve(cwd, r));
  return { ...p, writable_roots: [...new Set(p.writable_roots.map(abs))] };
}
