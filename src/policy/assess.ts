/**
 * gate-sh's per-subcommand assessment — what the daemon decides on and `gate explain` shows.
 *
 * Plain script: one entry per subcommand, each evaluated with its wrappers' inner commands and its
 * assignments (strictest wins). Complex script: one entry for the whole invocation (or Codex's heredoc
 * prefix) that a heuristic never allows, plus one entry per literal command found anywhere — those can
 * forbid or prompt, never allow. Execution: explicit allow → Unsandboxed only when EVERY evaluated
 * command of a plain script has an explicit allow rule; heuristic allow → TurnDefault; approved prompt →
 * as the request asked. Pure: no I/O.
 */
import { strictest, type Decision } from './decision.js';
import type { ApprovalPolicy } from './approval-policy.js';
import type { MatchOptions, Policy, RuleMatch } from './policy.js';
import type { PermissionProfile, SandboxPermissions, SandboxPolicy } from '../sandbox/policy.js';
import { deny, escalate, RUN, type Action, type EscalationExecution } from '../protocol/action.js';
import type { Assessment, EvaluatedCommand, SubcommandAssessment } from './assess-types.js';
import { extractShellInvocation } from '../script/shell-detect.js';
import { analyzeScript, unwrapCommand, type Subcommand } from '../script/analyze.js';
import { dangerousCommand, type DangerKind } from '../heuristics/dangerous.js';
import { codeLoadingVariables, type CodeLoadingOptions } from '../heuristics/code-loading.js';
import { evaluateAssignments, evaluateCommand, wrapperAssignments, type EvalContext, type EvaluatedWithMatches } from './assess-subcommand.js';
import { amendmentForAllow, amendmentForPrompt, deriveRequestedAmendment } from './amendment-proposal.js';
import { everyCommandExplicitlyAllowed, requirementFor, type ExecApprovalRequirement } from './requirement.js';
import { availableDecisions } from './assess-decisions.js';
import { shlexJoin } from './shlex.js';
import { explainUnmatchedCommand } from './unmatched.js';

export interface AssessContext {
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
  /** Trusted environment, writable roots and gate-sh's own entries for the code-loading check. */
  codeLoading?: CodeLoadingOptions;
}

/** The analyzer's reason for a dynamic command name (src/script/analyze.ts). */
const NON_LITERAL_NAME = /non-literal command name/;

interface Entry {
  argv: string[];
  kind: SubcommandAssessment['kind'];
  evaluated: EvaluatedWithMatches[];
  extra: EvaluatedCommand[];
  /** gate-sh's own prompt reason (code-loading, opaque), shown when no rule prompted. */
  ownReason?: string;
  opaque?: string;
  assignments?: string[];
  danger?: DangerKind;
  /** Commands whose matches Codex's amendment logic may use (plain subcommands only). */
  amendable: boolean;
}

export function assessCommand(argv: readonly string[], ctx: AssessContext): Assessment {
  const inv = extractShellInvocation([...argv]);
  if (inv) return assessInvocation([...argv], inv.script, ctx);
  const words = [...argv];
  const { inner, opaque } = unwrapCommand(words);
  const sub: Subcommand = { argv: words, assignments: [], inner, redirects: false, ...(opaque ? { opaque } : {}) };
  return finish(words, false, [], [plainEntry(sub, evalContext(ctx, false))], ctx);
}

export function assessScript(shell: string, flag: '-c' | '-lc', script: string, ctx: AssessContext): Assessment {
  return assessInvocation([shell, flag, script], script, ctx);
}

function evalContext(ctx: AssessContext, usedComplexParsing: boolean): EvalContext {
  const options: MatchOptions = { resolveHostExecutables: true, hardened: ctx.hardened ?? true };
  return {
    policy: ctx.policy,
    options,
    unmatched: {
      approvalPolicy: ctx.approvalPolicy,
      sandboxPolicy: ctx.sandboxPolicy,
      sandboxPermissions: ctx.sandboxPermissions,
      usedComplexParsing,
      gitReadOnly: ctx.gitReadOnly,
      argvOnlyDanger: true, // every subcommand, inner and literal command is its own entry
    },
    codeLoading: ctx.codeLoading,
  };
}

function assessInvocation(command: string[], script: string, ctx: AssessContext): Assessment {
  const a = analyzeScript(script);
  if (a.kind === 'plain') {
    const ec = evalContext(ctx, false);
    // An empty script: Codex evaluates the whole argv.
    const entries = a.commands.length > 0 ? a.commands.map((s) => plainEntry(s, ec)) : [plainEntry({ argv: command, assignments: [], inner: [], redirects: false }, ec)];
    return finish(command, false, [], entries, ctx);
  }
  const ec = evalContext(ctx, true);
  const head: Entry = a.heredocPrefix
    ? { ...plainEntry({ argv: [...a.heredocPrefix], assignments: [], inner: [], redirects: true }, ec), amendable: false }
    : {
        argv: command,
        kind: 'script',
        // A command whose name is only known at run time (`$x -rf y`) is never allowed by a heuristic.
        evaluated: [evaluateCommand({ argv: command, role: 'script', ...(a.reasons.some((r) => NON_LITERAL_NAME.test(r)) ? { mode: 'opaque' as const } : {}) }, ec)],
        extra: [],
        ownReason: `the script cannot be completely inspected: ${a.reasons.join('; ')}`,
        amendable: false,
      };
  const literals = a.literalCommands.map((s) => ({ ...plainEntry(s, ec, 'literal'), kind: 'literal' as const, amendable: false }));
  return finish(command, true, a.reasons, [head, ...literals], ctx);
}

function plainEntry(s: Subcommand, ec: EvalContext, literal?: 'literal'): Entry {
  const mode = s.opaque ? 'opaque' : literal;
  const evaluated = [
    evaluateCommand({ argv: [...s.argv], role: literal ? 'literal' : 'command', mode }, ec),
    ...s.inner.map((inner) => evaluateCommand({ argv: [...inner], role: 'inner', mode: literal }, ec)),
  ];
  const assignWords = [...s.assignments, ...wrapperAssignments(s.argv), ...s.inner.flatMap((i) => wrapperAssignments(i))];
  const assign = evaluateAssignments(assignWords, ec);
  const danger = [s.argv, ...s.inner].map((c) => dangerousCommand(c)).find((d) => d) ?? undefined;
  const reasons = [
    ...(s.opaque ? [`${s.opaque}: what it runs cannot be inspected`] : []),
    ...(assign ? [`sets code-loading variables: ${assign.vars.map((v) => v.name).join(', ')}`] : []),
  ];
  return {
    argv: [...s.argv],
    kind: 'plain',
    evaluated,
    extra: assign ? [assign.entry] : [],
    ...(reasons.length ? { ownReason: reasons.join('; ') } : {}),
    ...(s.opaque ? { opaque: s.opaque } : {}),
    ...(s.assignments.length ? { assignments: [...s.assignments] } : {}),
    ...(danger ? { danger } : {}),
    amendable: !s.opaque && !assign,
  };
}

function entryDecision(e: Entry): Decision {
  return strictest([...e.evaluated, ...e.extra].map((x) => x.decision)) ?? 'allow';
}

/** How an approved (or allowed) run executes, as the request asked. */
function requestedExecution(ctx: AssessContext): EscalationExecution {
  if (ctx.sandboxPermissions === 'require_escalated') return { type: 'Unsandboxed' };
  if (ctx.sandboxPermissions === 'with_additional_permissions' && ctx.additionalPermissions) return { type: 'Permissions', profile: ctx.additionalPermissions };
  return { type: 'TurnDefault' };
}

function actionFor(execution: EscalationExecution): Action {
  return execution.type === 'TurnDefault' ? RUN : escalate(execution);
}

function finish(command: string[], complex: boolean, reasons: string[], entries: Entry[], ctx: AssessContext): Assessment {
  const all: RuleMatch[] = entries.flatMap((e) => e.evaluated.flatMap((x) => x.matches));
  const plainCommands = entries.filter((e) => e.amendable).map((e) => e.argv);
  const everyAmendable = entries.every((e) => e.amendable);
  const bypass = !complex && everyAmendable && entries.every((e) => e.extra.length === 0) && everyCommandExplicitlyAllowed(all);
  const loading = ctx.env ? codeLoadingVariables(ctx.env, ctx.codeLoading) : [];

  const subcommands = entries.map((e, index) => assessEntry(e, index, { ctx, bypass, loadingNames: loading.map((v) => v.name) }));

  // Codex-compatible overall requirement over every evaluated command, reasons on the original argv.
  const decision = strictest(subcommands.map((s) => s.decision)) ?? 'allow';
  const requested = !complex && everyAmendable ? requestedAmendment(all, plainCommands, ctx) : null;
  // Before approval-policy rejections: Codex's reason texts depend on what the rules and heuristics said.
  const raw = strictest(subcommands.map((s) => s.decided_by.decision)) ?? 'allow';
  const requirement = overallRequirement(command, raw, subcommands, all, {
    ctx,
    bypass,
    promptAmendment: requested ?? (!complex && everyAmendable ? amendmentForPrompt(all) : null),
    skipAmendment: !complex && everyAmendable ? amendmentForAllow(all) : null,
  });
  return { decision, complex, complex_reasons: reasons, command, requirement, bypass_sandbox: bypass && requirement.type === 'skip', subcommands };
}

/** The model-requested prefix rule, when adding it would allow every command (Codex §4.5). */
function requestedAmendment(matchedRules: RuleMatch[], commands: string[][], ctx: AssessContext): string[] | null {
  const ec = evalContext(ctx, false);
  return deriveRequestedAmendment({
    prefixRule: ctx.prefixRule,
    matchedRules,
    policy: ctx.policy,
    commands,
    fallback: (c) => explainUnmatchedCommand(c, ec.unmatched).decision,
    options: ec.options,
  });
}

interface OverallOptions {
  ctx: AssessContext;
  bypass: boolean;
  promptAmendment: string[] | null;
  skipAmendment: string[] | null;
}

function overallRequirement(command: string[], decision: Decision, subs: SubcommandAssessment[], all: RuleMatch[], o: OverallOptions): ExecApprovalRequirement {
  const forbidden = subs.find((s) => s.requirement.type === 'forbidden');
  if (forbidden && decision === 'forbidden') return requirementFor({ command, evaluation: { decision, matchedRules: all }, approvalPolicy: o.ctx.approvalPolicy, promptAmendment: null, skipAmendment: null });
  if (forbidden) return forbidden.requirement; // a prompt the approval policy rejects
  if (decision === 'prompt') {
    const r = requirementFor({ command, evaluation: { decision, matchedRules: all }, approvalPolicy: o.ctx.approvalPolicy, promptAmendment: o.promptAmendment, skipAmendment: null });
    if (r.type === 'needs_approval' && r.reason === null) {
      const own = subs.find((s) => s.requirement.type === 'needs_approval' && s.requirement.reason);
      if (own && own.requirement.type === 'needs_approval') return { ...r, reason: own.requirement.reason };
    }
    return r;
  }
  return { type: 'skip', bypass_sandbox: o.bypass, proposed_execpolicy_amendment: o.skipAmendment };
}

interface EntryOptions {
  ctx: AssessContext;
  bypass: boolean;
  loadingNames: string[];
}

function assessEntry(e: Entry, index: number, o: EntryOptions): SubcommandAssessment {
  const { ctx } = o;
  const matches = e.evaluated.flatMap((x) => x.matches);
  let decision = entryDecision(e);
  const evaluated: EvaluatedCommand[] = [...e.evaluated.map(({ matches: _m, ...rest }) => rest), ...e.extra];
  const sources = evaluated.flatMap((x) => x.sources);
  let decidedBy = sources.find((s) => s.decision === decision) ?? sources[0];

  // Allowed runs: Unsandboxed only when every command of the script is explicitly allowed.
  let execution: EscalationExecution = o.bypass ? { type: 'Unsandboxed' } : { type: 'TurnDefault' };
  let ownReason = e.ownReason;
  if (decision === 'allow' && execution.type !== 'TurnDefault' && o.loadingNames.length > 0) {
    decision = 'prompt'; // a widening run must not carry code-loading variables silently
    ownReason = `an unsandboxed run with code-loading variables: ${o.loadingNames.join(', ')}`;
    decidedBy = { type: 'heuristic', decision: 'prompt', name: 'code-loading', command: o.loadingNames };
  }
  if (decision === 'prompt') execution = requestedExecution(ctx);

  const display = e.argv;
  const requested = e.amendable ? requestedAmendment(matches, [e.argv], ctx) : null;
  let requirement = requirementFor({
    command: display,
    evaluation: { decision, matchedRules: matches },
    approvalPolicy: ctx.approvalPolicy,
    promptAmendment: requested ?? (e.amendable ? amendmentForPrompt(matches) : null),
    skipAmendment: e.amendable ? amendmentForAllow(matches) : null,
  });
  if (requirement.type === 'needs_approval' && requirement.reason === null && ownReason)
    requirement = { ...requirement, reason: `\`${shlexJoin([...(e.assignments ?? []), ...display])}\`: ${ownReason}` };
  if (requirement.type === 'skip') requirement = { ...requirement, bypass_sandbox: execution.type === 'Unsandboxed' };

  const base = {
    index,
    argv: e.argv,
    kind: e.kind,
    // effective: a prompt the approval policy may not show is forbidden
    decision: requirement.type === 'forbidden' ? ('forbidden' as const) : decision,
    decided_by: decidedBy,
    evaluated,
    requirement,
    proposed_execpolicy_amendment: requirement.type === 'forbidden' ? null : requirement.proposed_execpolicy_amendment,
    ...(e.danger ? { danger: e.danger } : {}),
    ...(e.opaque ? { opaque: e.opaque } : {}),
    ...(e.assignments ? { assignments: e.assignments } : {}),
  };
  if (requirement.type === 'forbidden') return { ...base, execution: null, action: deny(requirement.reason) };
  if (requirement.type === 'skip') return { ...base, execution, action: actionFor(execution) };
  return {
    ...base,
    execution,
    action: 'prompt',
    on_approval: actionFor(execution),
    available_decisions: availableDecisions({
      proposedAmendment: requirement.proposed_execpolicy_amendment,
      additionalPermissions: ctx.sandboxPermissions === 'with_additional_permissions',
      skillScript: ctx.skillScript,
      dangerous: e.danger !== undefined,
      opaque: e.opaque !== undefined || e.kind !== 'plain',
    }),
  };
}
