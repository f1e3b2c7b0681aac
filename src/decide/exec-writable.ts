/**
 * Folders the gated caller (or anyone) could have written, when the caller does not say: what PATH
 * entries and escalated programs must not point into. From the turn's sandbox policy, the exec's cwd and
 * `also`: the folders the sandbox lets a run write besides the policy's (the runs' own working folders —
 * `cd /usr && ~/proj/git status` execs from /usr a git the run wrote in its workspace —, $TMPDIR,
 * the runtime folder), given by the daemon; world-writable temporary folders always count. Pure.
 */
import type { SandboxPolicy } from '../sandbox/index.js';

const WORLD_WRITABLE = ['/tmp', '/var/tmp', '/dev/shm'];

export function writableRootsFor(policy: SandboxPolicy, cwd: string | undefined, also: readonly string[] = []): string[] {
  const here = [...(cwd ? [cwd] : []), ...also];
  switch (policy.type) {
    case 'read-only':
      return [...also, ...WORLD_WRITABLE];
    case 'workspace-write':
      return [...here, ...policy.writable_roots, ...(policy.agent_writable_roots ?? []), ...WORLD_WRITABLE];
    default:
      // no filesystem sandbox: the workspace and the temporary folders are the likely plants
      return [...here, ...WORLD_WRITABLE];
  }
}
