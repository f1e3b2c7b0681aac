/**
 * The stricter of two sandbox policies, and policy equality. Pure. Used where a caller narrows gate-sh's own
 * sandbox for one call (`gate-sh --sandbox`: Codex's sandbox state through `gate mcp`, src/daemon/run-sandbox.ts):
 * the policy in force is never looser than either — a host asking for read-only gets it; a host asking for more (danger-full-
 * access, wider roots, the network) never widens gate-sh's own.
 */
import { posix } from 'node:path';
import type { SandboxPolicy } from './policy.js';

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

/** Is `p` the folder `root` or inside it (lexically; both absolute)? */
function within(p: string, root: string): boolean {
  const r = posix.normalize(root).replace(/\/+$/, '');
  const q = posix.normalize(p).replace(/\/+$/, '');
  return r === '' || q === r || q.startsWith(`${r}/`);
}

/** The folders both lists let a run write: each root of one that lies within a root of the other. */
function bothRoots(x: readonly string[] = [], y: readonly string[] = []): string[] {
  const out = [...x.filter((r) => y.some((s) => within(r, s))), ...y.filter((r) => x.some((s) => within(r, s)))];
  return [...new Set(out)];
}

/** none < rules (a proxy deciding each host) < the host's network */
function narrowerNetwork(a: boolean | 'rules', b: boolean | 'rules'): boolean | 'rules' {
  if (a === false || b === false) return false;
  return a === 'rules' || b === 'rules' ? 'rules' : true;
}

/**
 * The stricter of two policies, never looser than either: two workspace-write policies give the folders
 * both allow (the run's own folder stays writable in both: it is gate-sh's workspace), the network only if
 * both allow it, and `/tmp` and `$TMPDIR` only if both leave them writable; two external sandboxes the
 * network only if both enable it.
 */
export function stricterSandbox(a: SandboxPolicy, b: SandboxPolicy): SandboxPolicy {
  if (reach(a) !== reach(b)) return reach(a) < reach(b) ? a : b;
  if (a.type === 'workspace-write' && b.type === 'workspace-write') {
    const agent = bothRoots(a.agent_writable_roots, b.agent_writable_roots);
    return {
      type: 'workspace-write',
      writable_roots: bothRoots(a.writable_roots, b.writable_roots),
      ...(agent.length ? { agent_writable_roots: agent } : {}),
      network_access: narrowerNetwork(a.network_access, b.network_access),
      exclude_tmpdir_env_var: a.exclude_tmpdir_env_var || b.exclude_tmpdir_env_var,
      exclude_slash_tmp: a.exclude_slash_tmp || b.exclude_slash_tmp,
    };
  }
  if (a.type === 'external-sandbox' && b.type === 'external-sandbox')
    return { type: 'external-sandbox', network_access: a.network_access === 'enabled' && b.network_access === 'enabled' ? 'enabled' : 'restricted' };
  return a;
}

/** The same policy, field for field (roots in any order, fields in any order). */
export function samePolicy(a: SandboxPolicy, b: SandboxPolicy): boolean {
  const norm = (p: SandboxPolicy): string => {
    const o: Record<string, unknown> = { ...p };
    if (p.type === 'workspace-write') {
      o.writable_roots = [...p.writable_roots].sort();
      o.agent_writable_roots = [...(p.agent_writable_roots ?? [])].sort();
    }
    return JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
  };
  return norm(a) === norm(b);
}
