/**
 * Codex's `codex/sandbox-state/update` (shell-tool MCP): params `{sandboxPolicy, sandboxCwd?,
 * codexLinuxSandboxExe?, ...}` → the session's turn SandboxPolicy. Pure.
 *
 * gate-sh's workspace-write workspace is each run's cwd; Codex's is `sandboxCwd`, so a sandboxCwd is added
 * to writable_roots (a command run in a subfolder may still write the whole workspace, as in Codex).
 */
import { parseSandboxPolicy, type SandboxPolicy } from '../sandbox/policy.js';

export const SANDBOX_STATE_METHOD = 'codex/sandbox-state/update';
export const SANDBOX_STATE_CAPABILITY = 'codex/sandbox-state';
export const SANDBOX_STATE_VERSION = '1.0.0';

export class SandboxStateError extends Error {}

export function sandboxPolicyFromState(params: unknown): SandboxPolicy {
  if (!params || typeof params !== 'object' || Array.isArray(params)) throw new SandboxStateError('missing params for sandbox state request');
  const o = params as Record<string, unknown>;
  if (o.sandboxPolicy === undefined) throw new SandboxStateError('sandbox state needs "sandboxPolicy"');
  if (o.sandboxCwd !== undefined && (typeof o.sandboxCwd !== 'string' || !o.sandboxCwd.startsWith('/')))
    throw new SandboxStateError('"sandboxCwd" must be an absolute path');
  let policy: SandboxPolicy;
  try {
    policy = parseSandboxPolicy(o.sandboxPolicy);
  } catch (e) {
    throw new SandboxStateError(`failed to deserialize sandbox state: ${(e as Error).message}`);
  }
  for (const r of policy.type === 'workspace-write' ? policy.writable_roots : [])
    if (!r.startsWith('/')) throw new SandboxStateError(`writable root ${JSON.stringify(r)} must be an absolute path`);
  const cwd = o.sandboxCwd as string | undefined;
  if (policy.type === 'workspace-write' && cwd && !policy.writable_roots.includes(cwd)) return { ...policy, writable_roots: [...policy.writable_roots, cwd] };
  return policy;
}

/** How much a policy lets a run do, coarsely: more is looser. */
function reach(p: SandboxPolicy): number {
  switch (p.type) {
    case 'read-only':
      return 0;
    case 'workspace-write':
      return 1;
    case 'external-sandbox':
      return 2;
    case 'danger-full-access':
      return 3;
  }
}

/**
 * The stricter of two sandbox policies: what gate-sh applies when a host asks for one (`codex/sandbox-state/
 * update`) and gate-sh has its own. Never looser than either: two workspace-write policies give the roots
 * both allow, network only if both allow it, and `/tmp` and `$TMPDIR` only if both leave them writable;
 * external-sandbox's network only if both enable it. Pure.
 */
export function stricterSandbox(a: SandboxPolicy, b: SandboxPolicy): SandboxPolicy {
  if (reach(a) !== reach(b)) return reach(a) < reach(b) ? a : b;
  if (a.type === 'workspace-write' && b.type === 'workspace-write') {
    const both = (x: string[] | undefined, y: string[] | undefined): string[] => (x ?? []).filter((r) => (y ?? []).includes(r));
    const agent = both(a.agent_writable_roots, b.agent_writable_roots);
    return {
      type: 'workspace-write',
      writable_roots: both(a.writable_roots, b.writable_roots),
      ...(agent.length ? { agent_writable_roots: agent } : {}),
      // none < rules (a proxy deciding each host) < the host's network
      network_access: narrowerNetwork(a.network_access, b.network_access),
      exclude_tmpdir_env_var: a.exclude_tmpdir_env_var || b.exclude_tmpdir_env_var,
      exclude_slash_tmp: a.exclude_slash_tmp || b.exclude_slash_tmp,
    };
  }
  if (a.type === 'external-sandbox' && b.type === 'external-sandbox')
    return { type: 'external-sandbox', network_access: a.network_access === 'enabled' && b.network_access === 'enabled' ? 'enabled' : 'restricted' };
  return a;
}

function narrowerNetwork(a: boolean | 'rules', b: boolean | 'rules'): boolean | 'rules' {
  if (a === false || b === false) return false;
  return a === 'rules' || b === 'rules' ? 'rules' : true;
}

/** The same policy, field for field (roots in any order). Pure. */
export function samePolicy(a: SandboxPolicy, b: SandboxPolicy): boolean {
  const norm = (p: SandboxPolicy): string =>
    JSON.stringify(
      p.type === 'workspace-write'
        ? { ...p, writable_roots: [...p.writable_roots].sort(), agent_writable_roots: [...(p.agent_writable_roots ?? [])].sort() }
        : p,
    );
  return norm(a) === norm(b);
}
