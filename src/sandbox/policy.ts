/**
 * The sandbox's SandboxPolicy (the turn's sandbox) and PermissionProfile (explicit permissions for one run),
 * and parsing and checking a SandboxPolicy from a mode name or a policy object (config, flags, the wire).
 * Pure, no I/O. The wire's forms of both are src/protocol/sandbox-policy.ts's (protocol/ is below this
 * layer and cannot name these); they are the same shapes today, and the check at the end of this file
 * (SecretsSetting's too) fails the build the day they differ, where a conversion is then due.
 */
import type { WirePermissionProfile, WireSandboxPolicy, WireSecretsSetting } from '../protocol/index.js';
import type { SecretsSetting } from './secrets.js';

export type NetworkAccess = 'restricted' | 'enabled';

export type SandboxPolicy =
  | { type: 'danger-full-access' }
  | { type: 'read-only' }
  | { type: 'external-sandbox'; network_access: NetworkAccess }
  | {
      type: 'workspace-write';
      writable_roots: string[];
      /** an agent's own folders (`gate setup`): writable when present, skipped when missing, never
       * created: folders their agent deletes and re-creates (a missing `writable_roots` entry is an error) */
      agent_writable_roots?: string[];
      /** true: the host's network; false: none (loopback only); 'rules': none but a proxy of the daemon's that
       * decides each new host:port (docs/network.md) */
      network_access: boolean | 'rules';
      exclude_tmpdir_env_var: boolean;
      exclude_slash_tmp: boolean;
    };

export type SandboxMode = SandboxPolicy['type'];

/** Explicit permissions: exactly these, nothing wider. Paths absolute once resolved. */
export interface PermissionProfile {
  network?: boolean;
  file_system?: { read?: string[]; write?: string[] };
}

export class SandboxPolicyError extends Error {}

/** "Restricted" in Codex's sense: a managed read-only or workspace-write filesystem sandbox. */
export function isRestricted(p: SandboxPolicy): boolean {
  return p.type === 'read-only' || p.type === 'workspace-write';
}

export function workspaceWrite(over: Partial<Omit<Extract<SandboxPolicy, { type: 'workspace-write' }>, 'type'>> = {}): SandboxPolicy {
  return {
    type: 'workspace-write',
    writable_roots: over.writable_roots ?? [],
    ...(over.agent_writable_roots?.length ? { agent_writable_roots: over.agent_writable_roots } : {}),
    network_access: over.network_access ?? false,
    exclude_tmpdir_env_var: over.exclude_tmpdir_env_var ?? false,
    exclude_slash_tmp: over.exclude_slash_tmp ?? false,
  };
}

/** Parse a sandbox mode name (config `sandbox_mode`, `--sandbox`) or a full policy object. */
export function parseSandboxPolicy(v: unknown): SandboxPolicy {
  if (typeof v === 'string') {
    switch (v) {
      case 'danger-full-access':
      case 'read-only':
        return { type: v };
      case 'workspace-write':
        return workspaceWrite();
      case 'external-sandbox':
        return { type: 'external-sandbox', network_access: 'restricted' };
    }
    throw new SandboxPolicyError(
      `invalid sandbox policy '${v}': expected read-only, workspace-write, danger-full-access or external-sandbox`,
    );
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const base = parseSandboxPolicy(o.type ?? o.mode);
    if (base.type === 'workspace-write') {
      const roots = o.writable_roots ?? [];
      if (!Array.isArray(roots) || roots.some((r) => typeof r !== 'string'))
        throw new SandboxPolicyError('invalid sandbox policy: writable_roots must be a list of paths');
      const agentRoots = o.agent_writable_roots ?? [];
      if (!Array.isArray(agentRoots) || agentRoots.some((r) => typeof r !== 'string' || !r.startsWith('/')))
        throw new SandboxPolicyError('invalid sandbox policy: agent_writable_roots must be a list of absolute paths');
      for (const k of ['exclude_tmpdir_env_var', 'exclude_slash_tmp'] as const)
        if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new SandboxPolicyError(`invalid sandbox policy: ${k} must be a boolean`);
      if (o.network_access !== undefined && typeof o.network_access !== 'boolean' && o.network_access !== 'rules')
        throw new SandboxPolicyError('invalid sandbox policy: network_access must be true, false or "rules"');
      return workspaceWrite({
        writable_roots: roots as string[],
        agent_writable_roots: agentRoots as string[],
        network_access: o.network_access as boolean | 'rules' | undefined,
        exclude_tmpdir_env_var: o.exclude_tmpdir_env_var as boolean | undefined,
        exclude_slash_tmp: o.exclude_slash_tmp as boolean | undefined,
      });
    }
    if (base.type === 'external-sandbox') {
      const n = o.network_access ?? 'restricted';
      if (n !== 'restricted' && n !== 'enabled' && typeof n !== 'boolean')
        throw new SandboxPolicyError('invalid sandbox policy: network_access must be restricted or enabled');
      return { type: 'external-sandbox', network_access: n === true || n === 'enabled' ? 'enabled' : 'restricted' };
    }
    return base;
  }
  throw new SandboxPolicyError(`invalid sandbox policy ${JSON.stringify(v)}`);
}

/** true when A and B are the same type, optional members included (mutual assignability would not see an
 * optional member one of them lacks). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Holds<T extends true> = T;
/** The wire carries the sandbox's types as they are: a type error here means a wire form changed apart from
 * the sandbox's (or the other way round), and the daemon needs a conversion where it reads one. */
export type WireFormsMatch = [
  Holds<Same<SandboxPolicy, WireSandboxPolicy>>,
  Holds<Same<PermissionProfile, WirePermissionProfile>>,
  Holds<Same<SecretsSetting, WireSecretsSetting>>,
];
