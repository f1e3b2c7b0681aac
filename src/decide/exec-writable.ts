/**
 * Folders the gated caller (or anyone) could have written, when the caller does not say: what PATH
 * entries and escalated programs must not point into. From the turn's sandbox policy and the exec's cwd;
 * world-writable temporary folders always count.
 */
import type { SandboxPolicy } from '../sandbox/policy.js';

const WORLD_WRITABLE = ['/tmp', '/var/tmp', '/dev/shm'];

export function writableRootsFor(policy: SandboxPolicy, cwd: string | undefined): string[] {
  const here = cwd ? [cwd] : [];
  switch (policy.type) {
    case 'read-only':
      return [...WORLD_WRITABLE];
    case 'workspace-write':
      return [...here, ...policy.writable_roots, ...(policy.agent_writable_roots ?? []), ...WORLD_WRITABLE];
    default:
      // no filesystem sandbox: the workspace and the temporary folders are the likely plants
      return [...here, ...WORLD_WRITABLE];
  }
}
