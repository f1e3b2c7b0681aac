/**
 * A Decider with no exec-policy input: the whole invocation is one command and Codex's unmatched-command
 * fallback (§4.3 step 3) decides by approval policy and sandbox alone. Used until the per-subcommand
 * assessment is wired in (policy-decider.ts), and as the reference for the daemon's own tests.
 */
import { isRestricted } from '../sandbox/policy.js';
import { deny, escalate, RUN, type Action, type ReviewDecision } from '../protocol/action.js';
import type { Decider, DecideContext, ExecContext, SubcommandCheck } from './decide.js';
import type { PermissionProfile, SandboxPermissions } from '../sandbox/policy.js';

const DECISIONS: ReviewDecision[] = ['approved', 'approved_for_session', 'denied', 'abort'];

export const wholeScriptDecider: Decider = {
  name: 'whole-script (no exec policy)',
  preflight(req, ctx) {
    const argv = [req.shell, req.flag, req.script];
    return { complex: true, subcommands: [assess(argv, req.cwd, ctx, req.sandbox_permissions, req.additional_permissions)] };
  },
  exec(req, ctx: ExecContext) {
    return assess([req.program, ...req.argv.slice(1)], req.cwd, ctx, ctx.sandboxPermissions, ctx.additionalPermissions);
  },
};

function assess(argv: string[], cwd: string, ctx: DecideContext, perms: SandboxPermissions, extra?: PermissionProfile): SubcommandCheck {
  const approved = approvedAction(perms, extra);
  const escalation = perms !== 'use_default';
  const p = ctx.approvalPolicy;
  const prompt = p === 'untrusted' || (p !== 'never' && isRestricted(ctx.sandboxPolicy) && escalation);
  const base = {
    argv,
    source: [{ kind: 'heuristic' as const, name: 'no-exec-policy' }],
    matched_rule: 'heuristic:no-exec-policy',
    cache_key: JSON.stringify({ command: argv, cwd, sandbox_permissions: perms, additional_permissions: extra ?? null }),
    available_decisions: DECISIONS,
  };
  if (p === 'never' && escalation) {
    const reason = 'approval required by policy, but AskForApproval is set to Never';
    return { ...base, decision: 'forbidden', requirement: 'forbidden', reason, action: deny(reason) };
  }
  if (!prompt) return { ...base, decision: 'allow', requirement: 'skip', action: RUN };
  return { ...base, decision: 'prompt', requirement: 'needs_approval', action: approved };
}

function approvedAction(perms: SandboxPermissions, extra?: PermissionProfile): Action {
  if (perms === 'require_escalated') return escalate({ type: 'Unsandboxed' });
  if (perms === 'with_additional_permissions') return escalate(extra ? { type: 'Permissions', profile: extra } : { type: 'TurnDefault' });
  return RUN;
}
