/**
 * Parsing and checking SandboxPolicy (the turn's sandbox) from a mode name or a policy object (config,
 * flags, the wire); the types themselves are in src/protocol/sandbox-policy.ts. Pure, no I/O.
 */
import type { SandboxPolicy } from '../protocol/index.js';

// the wire types live in protocol/ (the wire layer, below this one); every sandbox user keeps importing them from here
export type { NetworkAccess, PermissionProfile, SandboxMode, SandboxPermissions, SandboxPolicy } from '../protocol/index.js';

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
