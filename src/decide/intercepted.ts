/**
 * The exec-gate decision for one intercepted exec (Codex `CoreShellActionProvider::determine_action`,
 * §5.4–5.5) plus gate-sh's hardening. Pure: the daemon passes what it verified about the caller.
 *
 *   explicit allow rule  → Escalate(Unsandboxed)       (a policy-driven decision leaves the sandbox)
 *                          — only for the model's own command: a program's child runs in place
 *   heuristic allow      → Run                         (in place, inside the caller's sandbox)
 * Where the command came from (src/decide/provenance.ts): an exec a program running its own files made
 * (a make recipe, configure, a script file) is decided by the rules only; the heuristics decide the model's.
 *   prompt               → ask; approved → as the request asked (Escalate(execution) or Run)
 *   forbidden            → Deny("Execution forbidden by policy")
 * Hardening: code-loading variables in the exec's environment turn an escalation that would widen the run
 * (Unsandboxed, Permissions) into a prompt.
 */
import { elsewhereCommand, inProcessCommands, unwrapCommand } from '../script/index.js';
import type { ApprovalPolicy } from './approval-policy.js';
import { type Decision, type Evaluation, type MatchOptions, type Policy, stricter } from '../rules/index.js';
import type { PermissionProfile, SandboxPolicy } from '../sandbox/index.js';
import { type Action, deny, escalate, type EscalationExecution, type ReviewDecision, RUN, type SandboxPermissions } from '../protocol/index.js';
import { normalize } from 'node:path';
import { escalationRequested } from './unmatched.js';
import { decideExecCommand, GATE_SHIMS_BIN } from './exec-command.js';
import { writableRootsFor } from './exec-writable.js';
import type { DecidedBy } from './types.js';
import { promptRejectedByPolicy } from './requirement.js';
import { availableDecisions } from './available-decisions.js';
import { commandsForExecPolicy } from './codex.js';
import { type CodeLoadingOptions, type CodeLoadingVariable, codeLoadingVariables } from '../heuristics/index.js';
import { basenameOf, decidedAsInner, DECIDED_AS_INNER } from './wrapper-inner.js';
import { scriptRunByInterpreter, type KernelCommand } from './shebang.js';
import { scriptOfShell, type Provenance } from './provenance.js';

export const FORBIDDEN_BY_POLICY = 'Execution forbidden by policy';
export const USER_DENIED = 'User denied execution';
export const USER_CANCELLED = 'User cancelled execution';

export interface InterceptedContext {
  policy: Policy;
  approvalPolicy: ApprovalPolicy;
  sandboxPolicy: SandboxPolicy;
  /** What the request asked for (preapproved additional permissions count as use_default). */
  sandboxPermissions: SandboxPermissions;
  additionalPermissions?: PermissionProfile;
  /** The turn's filesystem policy has deny-read entries: runs may not leave the sandbox (newest Codex). */
  sandboxHasDenyEntries?: boolean;
  /** Basename prompt/forbidden rules also catch other paths (gate-sh default true; Codex false). */
  hardened?: boolean;
  gitReadOnly?: boolean;
  /** Older Codex: decide an intercepted `bash -lc '<plain script>'` by its inner commands. Off by default
   * (newest Codex): the shell is decided as a whole and each inner exec when it happens. */
  shellWrapperParsing?: boolean;
  /** The program is a skill script (src/skills): forbidden rules still apply; it runs with exactly its
   * declared permissions after an approval (offering approved_for_session), or in the turn sandbox. */
  skill?: SkillExec;
  /** The exec's environment (gate-sh hardening); omitted → not checked. `codeLoading.writableRoots`
   * defaults to the folders the turn's sandbox lets the caller write (exec-writable.ts). */
  env?: Readonly<Record<string, string | undefined>>;
  codeLoading?: CodeLoadingOptions;
  /** The program's real path when it is a symlink (`ln -s /bin/rm ./x`): a rule about the real program
   * (forbidden, prompt) applies too — the stricter of the two decides. Rules only: heuristics keep deciding
   * the name called (multi-call binaries such as busybox would otherwise all look unknown). */
  realProgram?: string;
  /** The rule name whose program has the same bytes as this one (src/daemon/program-identity.ts). */
  knownAs?: string;
  /** The `#!` line of a file (without `#!`), or null: lets `node /usr/bin/npm test`, which is how the
   * kernel runs `/usr/bin/npm test`, be decided as that (src/decide/shebang.ts). */
  shebangOf?: (path: string) => string | null;
  /** Where the exec's command came from (src/decide/provenance.ts), worked out only when it matters (a
   * heuristic would ask, or an allow rule would take it out of the sandbox). Omitted: the model's own. */
  provenance?: () => Provenance;
  /** The exec's file is a `#!` script: what the kernel runs for it (src/decide/shebang.ts), decided too. */
  kernelCommand?: KernelCommand | 'unreadable';
}

export interface SkillExec {
  permissions?: PermissionProfile;
}

export interface InterceptedDecision {
  /** `[program, argv[1..]]`: what was evaluated and what a prompt shows. */
  command: string[];
  cwd: string;
  decision: Decision;
  /** A rule (not a heuristic) had the final decision. */
  decision_driven_by_policy: boolean;
  /** The rule (file:line) or heuristic that set the decision (as in `gate explain`). */
  decided_by: DecidedBy;
  /** The answer now: Run / Escalate / Deny, or 'prompt' to ask first. */
  action: Action | 'prompt';
  /** How it runs if it escalates. */
  execution: EscalationExecution;
  /** What an approval turns it into (action 'prompt'). */
  on_approval?: Action;
  available_decisions?: ReviewDecision[];
  /** Why (human readable; the Deny reason when denied). */
  reason: string;
  evaluation: Evaluation;
  code_loading: CodeLoadingVariable[];
  /** Set when gate-sh's exec-time hardening (not the rules or Codex's heuristic) made it a prompt (or, for a
   * program in a writable folder, kept it in the sandbox): what
   * it saw here (environment, program path, declared permissions) was not part of any earlier approval. */
  hardening?: 'code-loading' | 'writable-program' | 'skill-permissions' | 'interpreter' | 'elsewhere';
  /** Where the command came from, when it was worked out (audit, `gate explain`). */
  provenance?: Provenance;
}

/** Drop-in implementations a program may be started as: Claude Code's shell snapshot runs its own binary
 * as `bfs` for find and `ugrep` for grep. A rule about the command a name stands for applies to it too. */
export const STANDS_FOR: Readonly<Record<string, string>> = { bfs: 'find', ugrep: 'grep' };

/**
 * The names an exec is called by besides its program's own: argv[0] when it names another program
 * (`exec -a rm ./x`, a multi-call binary dispatching on it; a login shell's leading '-' aside), and the
 * command that name stands for. Rules about them apply too, the stricter deciding: a name can only add a
 * rule's decision, never take one away, so choosing argv[0] cannot loosen a decision.
 */
export function calledNames(program: string, argv: readonly string[]): string[] {
  const called = basenameOf(argv[0] ?? '').replace(/^-/, '');
  if (called === '' || called === basenameOf(program)) return [];
  const standsFor = Object.hasOwn(STANDS_FOR, called) ? STANDS_FOR[called] : undefined;
  return standsFor && standsFor !== basenameOf(program) ? [called, standsFor] : [called];
}

/** argv0 replaced by the resolved absolute program (`join_program`). */
export function joinProgram(program: string, argv: readonly string[]): string[] {
  return [program, ...argv.slice(1)];
}

/** The Action a decided exec gets once allowed (or approved). */
function allowedAction(needsEscalation: boolean, execution: EscalationExecution): Action {
  return needsEscalation ? escalate(execution) : RUN;
}

/** The answer to an approver's ReviewDecision for a prompted exec. */
export function actionForReview(d: InterceptedDecision, review: ReviewDecision): Action {
  if (review === 'denied') return deny(USER_DENIED);
  if (review === 'abort') return deny(USER_CANCELLED);
  return d.on_approval ?? deny(USER_DENIED);
}

/**
 * One decision per command: pre-flight (or an earlier exec prompt) already settled this argv+cwd in this
 * run. Reuse that answer instead of asking again — but forbidden rules and rejections still deny at every
 * depth, answers that need no prompt stand as decided now (a program in a writable folder runs in the
 * sandbox, whatever was settled), and a prompt raised by exec-time hardening (code-loading variables,
 * skill permissions) is asked, because the earlier approval never saw them.
 */
export function reuseSettled(d: InterceptedDecision, settled: Action): Action | 'prompt' {
  if (d.action !== 'prompt') return d.action;
  if (d.hardening) return 'prompt';
  return settled;
}

export function decideIntercepted(program: string, argv: readonly string[], cwd: string, ctx: InterceptedContext): InterceptedDecision {
  const script = ctx.shebangOf ? scriptRunByInterpreter(program, argv, ctx.shebangOf) : null;
  if (script) return decideIntercepted(script[0], script, cwd, { ...ctx, shebangOf: undefined, realProgram: undefined, knownAs: undefined });
  if (ctx.kernelCommand !== undefined) return decideScriptExec(program, argv, cwd, ctx, ctx.kernelCommand);
  const command = joinProgram(program, argv);
  let known: Provenance | undefined;
  const provenance = (): Provenance => (known ??= ctx.provenance ? ctx.provenance() : { kind: 'model', widen: true });
  const unmatched = {
    approvalPolicy: ctx.approvalPolicy,
    sandboxPolicy: ctx.sandboxPolicy,
    sandboxPermissions: ctx.sandboxPermissions,
    usedComplexParsing: false,
    gitReadOnly: ctx.gitReadOnly,
    programOwn: () => provenance().kind === 'program',
  };
  const options: MatchOptions = { resolveHostExecutables: true, hardened: ctx.hardened ?? true };
  // the loader run as a program, a multi-call binary: the program it runs in its own process is decided too
  const inner = inProcessCommands(ctx.realProgram ? joinProgram(ctx.realProgram, argv) : command);
  // a copy, link, rename or memfd of a program a prompt/forbidden rule names: decided as that program too
  if (ctx.knownAs) inner.push(joinProgram(ctx.knownAs, argv), ...inProcessCommands(joinProgram(ctx.knownAs, argv)));
  // `sh ./configure`: decided as `./configure` too (a rule about the script holds however it is started)
  const ownScript = scriptOfShell(command);
  if (ownScript) inner.push(ownScript);
  // tmux, screen, ssh, docker exec, systemd-run, at: what they hand to a server, host or scheduler beyond
  // the exec gate is decided now, as if this run made it
  const away = elsewhereCommand([basenameOf(program), ...argv.slice(1)]);
  if (away) inner.push(...away.inner);
  const commands = [...(ctx.shellWrapperParsing ? commandsForExecPolicy(command).commands : [command]), ...inner];
  let { evaluation, decision, byPolicy, decidedBy } = decideExecCommand(ctx.policy, commands, options, unmatched);
  const alsoAs = [...(ctx.realProgram && ctx.realProgram !== program ? [ctx.realProgram] : []), ...calledNames(program, argv)];
  for (const other of alsoAs) {
    const as = decideExecCommand(ctx.policy, [joinProgram(other, argv)], options, unmatched);
    if (as.byPolicy && stricter(as.decision, decision) !== decision) ({ evaluation, decision, byPolicy, decidedBy } = as);
  }
  // `timeout 30 git status`: decided as `git status` (src/decide/wrapper-inner.ts); the inner exec is
  // checked again when the wrapper makes it, so the wrapper itself only runs in place
  if (!byPolicy && decidedBy.type === 'heuristic' && decidedBy.name === 'approval-policy' && DECIDED_AS_INNER.has(basenameOf(program))) {
    const u = unwrapCommand([basenameOf(program), ...argv.slice(1)]);
    const inner = u.opaqueKind ? [] : u.inner;
    if (decidedAsInner(program, inner, true, decision) && inner.every((c) => decideExecCommand(ctx.policy, [c], options, unmatched).decision === 'allow'))
      ({ decision, decidedBy } = { decision: 'allow', decidedBy: { type: 'heuristic', decision: 'allow', name: 'wrapper', command } });
  }
  const skill = ctx.skill;
  const execution = skill ? skillExecution(skill) : executionFor(byPolicy, ctx);
  // An allow rule means "run it outside" — unless deny-read entries forbid leaving the sandbox (newest
  // Codex), or it is a skill script (its declared permissions, never more), or a program running its own
  // files made the exec (a rule about the model's command never widens a build's children).
  const byRuleOutside = byPolicy && decision !== 'forbidden' && !ctx.sandboxHasDenyEntries;
  const inPlace = byRuleOutside && !escalationRequested(ctx.sandboxPermissions) && !skill && !provenance().widen;
  const needsEscalation = skill
    ? execution.type !== 'TurnDefault'
    : escalationRequested(ctx.sandboxPermissions) || (byPolicy && !ctx.sandboxHasDenyEntries && !inPlace);
  const base = {
    command,
    cwd,
    decision,
    decision_driven_by_policy: byPolicy,
    decided_by: decidedBy,
    execution,
    evaluation,
    code_loading: [] as CodeLoadingVariable[],
    ...(known ? { provenance: known } : {}),
  };

  if (decision === 'forbidden') return { ...base, action: deny(FORBIDDEN_BY_POLICY), reason: FORBIDDEN_BY_POLICY };

  const onApproval = allowedAction(needsEscalation, execution);
  const prompt = (reason: string, extra: Partial<InterceptedDecision> = {}): InterceptedDecision => {
    const rejected = promptRejectedByPolicy(ctx.approvalPolicy, byPolicy);
    if (rejected) return { ...base, ...extra, action: deny(FORBIDDEN_BY_POLICY), reason: `${FORBIDDEN_BY_POLICY}: ${rejected}` };
    const decisions = availableDecisions({
      proposedAmendment: null,
      additionalPermissions: ctx.sandboxPermissions === 'with_additional_permissions',
      skillScript: !!skill,
    });
    return { ...base, ...extra, action: 'prompt', on_approval: onApproval, available_decisions: decisions, reason };
  };

  // what it hands elsewhere cannot be read (commands on stdin for `at`, a remote shell): outside any sandbox
  // nothing contains it, so a person decides, whoever made the exec (inside one, its sockets are masked and
  // the spool is read-only)
  const outside = ctx.sandboxPolicy.type === 'danger-full-access' || (onApproval.type === 'Escalate' && onApproval.execution.type === 'Unsandboxed');
  if (away?.hidden && decision === 'allow' && outside)
    return prompt(`${away.hidden.text}: it runs beyond the exec gate, outside any sandbox`, { decision: 'prompt', hardening: 'elsewhere' });
  // A widening escalation must not carry code-loading variables silently, nor run a program the
  // sandboxed caller could have written (a rule approved `git`, not `./bin/git` in the workspace).
  const widens = onApproval.type === 'Escalate' && onApproval.execution.type !== 'TurnDefault';
  // (only a widening run needs the writable roots: not worked out for every exec that runs in place)
  const codeLoading = widens
    ? { ...ctx.codeLoading, writableRoots: ctx.codeLoading?.writableRoots ?? writableRootsFor(ctx.sandboxPolicy, cwd), program, argv }
    : undefined;
  const loading = codeLoading && ctx.env ? codeLoadingVariables(ctx.env, codeLoading) : [];
  const vars = loading.map((v) => v.name).join(', ');
  if (decision === 'prompt') {
    const why = byPolicy ? 'a rule asks for approval' : 'no rule matched; the approval policy asks';
    return prompt(why + (loading.length ? `; the escalated run carries code-loading variables: ${vars}` : ''), {
      code_loading: loading,
      ...(loading.length ? { hardening: 'code-loading' as const } : {}),
    });
  }
  // A skill script with declared permissions runs with them only after a human said so.
  if (skill && widens)
    return prompt(`skill script asks for its declared permissions${loading.length ? `; code-loading variables: ${vars}` : ''}`, {
      decision: 'prompt',
      code_loading: loading,
      hardening: 'skill-permissions',
    });
  if (loading.length > 0)
    return prompt(`escalated run with code-loading variables: ${vars}`, { decision: 'prompt', code_loading: loading, hardening: 'code-loading' });
  // gate-sh's own nested-shell shims are bound read-only in every sandbox (src/exec/exec-gate.ts), even
  // when the installation lies inside a writable root (a clone under /tmp): the caller could not write them
  if (codeLoading && isInsideAny(program, codeLoading.writableRoots) && !isInsideAny(program, [GATE_SHIMS_BIN])) {
    // never a way out: a program the sandbox could have written runs in the sandbox,
    // whatever rule would escalate it and whoever would approve it; with no sandbox to keep it in, a
    // person decides
    if (ctx.sandboxPolicy.type === 'danger-full-access' || ctx.sandboxPolicy.type === 'external-sandbox')
      return prompt(`escalated run of a program inside a writable folder: ${program}`, { decision: 'prompt', hardening: 'writable-program' });
    return {
      ...base,
      action: RUN,
      hardening: 'writable-program',
      reason: `a rule would escalate ${program}, but it lies in a folder the sandbox can write: it runs in the sandbox`,
    };
  }
  const reason = inPlace
    ? 'allowed by a rule; a program running its own files made it, so it runs in place, in the sandbox'
    : byPolicy
      ? 'allowed by a rule'
      : decidedBy.type === 'heuristic' && decidedBy.name === 'program'
        ? "a program's own exec: no rule matched, it runs in place"
        : 'allowed by heuristics';
  return { ...base, action: onApproval, reason };
}

/**
 * A `#!` script's exec: decided as itself and as what the kernel runs — its interpreter with the
 * interpreter's argument, the script and the arguments (src/decide/shebang.ts). The interpreter's decision
 * can only add strictness: its forbidden denies, its prompt asks and shows that command; an allow rule about
 * the interpreter never escalates the script (the script's own decision says how it runs). A `#!` line that
 * cannot be read exactly is asked about.
 */
function decideScriptExec(
  program: string,
  argv: readonly string[],
  cwd: string,
  ctx: InterceptedContext,
  k: KernelCommand | 'unreadable',
): InterceptedDecision {
  const own = decideIntercepted(program, argv, cwd, { ...ctx, kernelCommand: undefined });
  if (own.decision === 'forbidden' || (own.action !== 'prompt' && own.action.type === 'Deny')) return own;
  // approved, it runs as the script's own decision has it (in place, unless a rule about the script escalates it)
  const ownAllowed = own.action === 'prompt' ? (own.on_approval ?? RUN) : own.action;
  if (k === 'unreadable') {
    const rejected = promptRejectedByPolicy(ctx.approvalPolicy, false);
    const reason = `the #! line of ${program} cannot be read exactly (not UTF-8, or interpreters nested too deep)`;
    if (rejected) return { ...own, decision: 'prompt', action: deny(FORBIDDEN_BY_POLICY), reason: `${FORBIDDEN_BY_POLICY}: ${rejected}` };
    const decisions = own.available_decisions ?? availableDecisions({ proposedAmendment: null, additionalPermissions: false, skillScript: false });
    return { ...own, decision: 'prompt', action: 'prompt', on_approval: ownAllowed, available_decisions: decisions, reason, hardening: 'interpreter' };
  }
  const kern = decideIntercepted(k.program, k.argv, cwd, { ...ctx, kernelCommand: undefined, realProgram: undefined, knownAs: k.knownAs, skill: undefined });
  if (kern.decision === 'allow' || stricter(kern.decision, own.decision) === own.decision && own.decision !== kern.decision)
    // the kernel's program adds nothing: the script's own answer
    return own;
  // a script the heuristics let run: its #! line is the script's own file, not the model's text, so only
  // the user's rules about its interpreter add strictness (rules at every exec, heuristics for
  // what the model wrote); `npm test` under untrusted is not asked as `env node npm test`
  if (own.decision === 'allow' && !kern.decision_driven_by_policy) return own;
  if (kern.action !== 'prompt') {
    // a Deny (forbidden, or a prompt the approval policy rejects): said with the program that would have run
    const runs = JSON.stringify(kern.command);
    const why = `${kern.action.type === 'Deny' ? kern.action.reason : kern.reason}; its #! line runs ${runs.length > 300 ? `${runs.slice(0, 299)}…` : runs}`;
    return { ...kern, action: kern.action.type === 'Deny' ? deny(why) : kern.action, reason: why };
  }
  // a rule about the interpreter (or a stricter heuristic) asks: the person sees the program that runs,
  // and an answer settled for the script's own name does not stand for it
  const hardening = kern.decision_driven_by_policy || stricter(kern.decision, own.decision) !== own.decision ? { hardening: 'interpreter' as const } : {};
  return { ...kern, on_approval: ownAllowed, ...hardening };
}

/** A skill script runs with exactly its declared permissions, or in the turn sandbox. */
function skillExecution(skill: SkillExec): EscalationExecution {
  return skill.permissions ? { type: 'Permissions', profile: skill.permissions } : { type: 'TurnDefault' };
}

function isInsideAny(path: string, roots: readonly string[]): boolean {
  const p = normalize(path);
  return roots.some((r) => {
    const root = normalize(r).replace(/\/+$/, '');
    return root === '' || p === root || p.startsWith(root + '/');
  });
}

/** Policy-driven → Unsandboxed; else as requested. Deny-read entries keep everything in the sandbox. */
function executionFor(byPolicy: boolean, ctx: InterceptedContext): EscalationExecution {
  if (ctx.sandboxHasDenyEntries) {
    if (ctx.sandboxPermissions === 'with_additional_permissions' && ctx.additionalPermissions)
      return { type: 'Permissions', profile: ctx.additionalPermissions };
    return { type: 'TurnDefault' };
  }
  if (byPolicy) return { type: 'Unsandboxed' };
  switch (ctx.sandboxPermissions) {
    case 'use_default':
      return { type: 'TurnDefault' };
    case 'require_escalated':
      return { type: 'Unsandboxed' };
    case 'with_additional_permissions':
      return ctx.additionalPermissions ? { type: 'Permissions', profile: ctx.additionalPermissions } : { type: 'TurnDefault' };
  }
}

