/**
 * A run's own sandbox: the session's (gate-sh's configured one) narrowed by what the caller asked for this
 * call (`gate-sh --sandbox`, pre-flight `sandbox_at_most`: a host's per-call sandbox, e.g. Codex's sandbox
 * state through `gate mcp`). Only that call and the runs started inside it get it; other clients of the
 * daemon keep the session's. Pure.
 * Trust: anyone on the request channel may ask, a sandboxed script included: a narrowing can only narrow
 * (stricter.ts), so asking widens nothing.
 */
import { parseSandboxPolicy, type SandboxPolicy, SandboxPolicyError, stricterSandbox } from '../sandbox/index.js';

export class RunSandboxes {
  /** per session policy, per run's at-most object: a run's many exec decisions get one policy object (the
   * decider's context key is built once per object) */
  private readonly memo = new Map<SandboxPolicy, WeakMap<SandboxPolicy, SandboxPolicy>>();

  /** The policy a run runs under: the session's, or the stricter of it and the run's at-most. Computed at
   * each use, so a later change of the session's own (gate config set) holds over narrowed runs too. */
  of(session: SandboxPolicy, atMost: SandboxPolicy | undefined): SandboxPolicy {
    if (!atMost) return session;
    let byAsked = this.memo.get(session);
    if (!byAsked) {
      if (this.memo.size >= 8) this.memo.clear();
      this.memo.set(session, (byAsked = new WeakMap()));
    }
    let p = byAsked.get(atMost);
    if (!p) byAsked.set(atMost, (p = stricterSandbox(session, atMost)));
    return p;
  }
}

/** The at-most a run keeps: what its pre-flight asked, within what its enclosing run had (a nested shell
 * never gets out of its parent's narrowing). Throws SandboxPolicyError for a policy that cannot be read. */
export function runAtMost(asked: unknown, parent: SandboxPolicy | undefined): SandboxPolicy | undefined {
  if (asked === undefined) return parent;
  const own = parseSandboxPolicy(asked);
  if (own.type === 'workspace-write' && own.writable_roots.some((r) => !r.startsWith('/')))
    throw new SandboxPolicyError('invalid sandbox policy: writable_roots must be absolute paths');
  return parent ? stricterSandbox(parent, own) : own;
}
