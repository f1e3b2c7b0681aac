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
