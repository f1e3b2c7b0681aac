/**
 * The shape of gate-sh's per-subcommand decision: what the daemon decides per subcommand and what
 * `gate explain --json` prints. Field names are snake_case where they mirror Codex's wire names and are
 * part of the stable JSON (documented in docs/explain.md); add fields, never rename them.
 */
import type { Decision, Policy } from '../rules/index.js';
import type { Action, DecisionSource, EscalationExecution, ReviewDecision, SandboxPermissions } from '../protocol/index.js';
import type { ApprovalPolicy } from './approval-policy.js';
import type { PermissionProfile, SandboxPolicy } from '../sandbox/index.js';
import type { CodeLoadingOptions, DangerKind } from '../heuristics/index.js';
import type { ExecApprovalRequirement } from './requirement.js';
import type { UnmatchedReason } from './unmatched.js';
import type { OpaqueKind } from '../script/index.js';

export interface DecideContext {
  policy: Policy;
  approvalPolicy: ApprovalPolicy;
  sandboxPolicy: SandboxPolicy;
  sandboxPermissions: SandboxPermissions;
  additionalPermissions?: PermissionProfile;
  /** The model-requested `prefix_rule`. */
  prefixRule?: readonly string[] | null;
  gitReadOnly?: boolean;
  /** Basename prompt/forbidden rules catch every path spelling (default true). */
  hardened?: boolean;
  /** The command is a skill script (approvals offer approved_for_session). */
  skillScript?: boolean;
  /** The caller's environment: code-loading variables in it turn a widening run into a prompt. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The run's cwd: with the sandbox policy, the default writable roots for the code-loading check. */
  cwd?: string;
  /** Trusted environment, writable roots and gate-sh's own entries for the code-loading check. */
  codeLoading?: CodeLoadingOptions;
  /** Reads a file the script sources (the daemon's reader); absent: every `source` stays opaque. */
  readSource?: (path: string) => string | null;
}

/**
 * What decided one evaluated command (the decision's own, richer form; `toWireSource` maps it onto the
 * request-channel `DecisionSource` of src/protocol/messages.ts).
 */
export type DecidedBy =
  | {
      type: 'rule';
      decision: Decision;
      matched_prefix: string[];
      file: string;
      line: number;
      col: number;
      justification?: string;
      resolved_program?: string;
    }
  | { type: 'heuristic'; decision: Decision; name: HeuristicName; command: string[] };

/**
 * known-safe / dangerous / approval-policy / sandbox / escalation-requested: Codex's unmatched-command
 * fallback (§4.3); opaque: eval, source, a non-literal command name (never auto-allowed); code-loading:
 * an assignment or environment variable that loads code; literal: a literal command of a complex script
 * that no rule matched and that is not dangerous (no objection: it allows nothing by itself); invalid: an
 * empty command (nothing to decide: forbidden); start-up: an exec of the login profile or rc files before
 * the script's first command (forbidden rules only); per-exec: a complex script run with every exec
 * decided when it happens; wrapper: a known-grammar wrapper (timeout, nice, env...) decided as the command
 * it runs; builtin: a bash builtin that only reads and prints (test, [, :, printf, type, command -v);
 * program: an exec a program running its own files made (a make recipe, configure, a script file): the
 * rules only (src/decide/provenance.ts); sandboxed: opaque code (inline code, a script file, source, eval,
 * a name known only at run time) that runs in the turn sandbox with every exec it makes decided then.
 */
export type HeuristicName = UnmatchedReason | 'opaque' | 'code-loading' | 'literal' | 'invalid' | 'start-up' | 'per-exec' | 'wrapper' | 'builtin' | 'sandboxed';

/** One evaluated command (the subcommand itself, a wrapper's inner command, or a literal command). */
export interface DecidedCommand {
  argv: string[];
  role: 'command' | 'inner' | 'literal' | 'script' | 'assignment';
  decision: Decision;
  sources: DecidedBy[];
}

export interface SubcommandDecision {
  /** Position in script order (0-based). */
  index: number;
  /** The words as bash will run them (for the complex-script entry: the whole invocation). */
  argv: string[];
  kind: 'plain' | 'script' | 'literal' | 'write';
  /** Strictest over `evaluated`. */
  decision: Decision;
  /** The source that set the decision (the first one with the strictest decision). */
  decided_by: DecidedBy;
  evaluated: DecidedCommand[];
  requirement: ExecApprovalRequirement;
  /** How it runs once allowed or approved; null when forbidden. */
  execution: EscalationExecution | null;
  /** The pre-flight Action: Run, Escalate(execution), Deny(reason), or 'prompt' (ask first). */
  action: Action | 'prompt';
  /** What an approval turns it into (present when action is 'prompt'). */
  on_approval?: Action;
  /** Offered to approvers when action is 'prompt'. */
  available_decisions?: ReviewDecision[];
  proposed_execpolicy_amendment: string[] | null;
  danger?: DangerKind;
  /** Why the command cannot be inspected (eval, source, su -c, ...), for display. */
  opaque?: string;
  /** The same as data (src/script/types.ts OpaqueKind); present exactly when `opaque` is. */
  opaque_kind?: OpaqueKind;
  assignments?: string[];
  /** A per-exec script's whole-script entry: the sandbox its bash runs in (ScriptDecision.per_exec_sandbox);
   * its `action` and `execution` are then relative to that sandbox, not the turn's. */
  sandbox?: SandboxPolicy;
}

export interface ScriptDecision {
  /** Overall: strictest over all subcommands. */
  decision: Decision;
  complex: boolean;
  /** Why the script is complex (empty when plain). */
  complex_reasons: string[];
  /** The invocation as given. */
  command: string[];
  /** Codex-compatible overall requirement over every evaluated command. */
  requirement: ExecApprovalRequirement;
  /** true only when every evaluated command of every subcommand has an explicit allow rule. */
  bypass_sandbox: boolean;
  subcommands: SubcommandDecision[];
  /** The complex script runs with every exec decided when it happens (docs/strict.md): what pre-flight asks is
   * only what it could decide; without asked writes the run's sandbox is read-only. */
  per_exec: boolean;
  /** The subcommands asked before anything runs (argv), in script order. */
  asked_up_front: string[][];
  /** Where a per-exec script's bash runs (null when not per exec): read-only, or the turn sandbox once
   * the writes it asks up front are approved. The daemon's pre-flight reply carries this same policy. */
  per_exec_sandbox: SandboxPolicy | null;
  /** per_exec_sandbox is stricter than the turn's: a denial it causes is offered as the sandbox-failure
   * rerun even when the script exits 0. */
  sandbox_narrowed: boolean;
}

/** The request-channel form of a DecidedBy. */
export function toWireSource(s: DecidedBy): DecisionSource {
  if (s.type === 'rule')
    return {
      kind: 'rule',
      file: s.file,
      line: s.line,
      pattern: s.matched_prefix,
      ...(s.justification !== undefined ? { justification: s.justification } : {}),
    };
  return { kind: 'heuristic', name: s.name };
}
