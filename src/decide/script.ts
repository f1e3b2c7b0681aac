/**
 * gate-sh's per-subcommand decision — what the daemon decides on and `gate explain` shows.
 *
 * Plain script: one entry per subcommand, each decided with its wrappers' inner commands and its
 * assignments (strictest wins). Complex script: one entry for the whole invocation (or Codex's heredoc
 * prefix), never proven safe, plus one entry per literal command found anywhere — those can forbid or
 * prompt, never allow. Execution: explicit allow → Unsandboxed only when EVERY evaluated command has an
 * explicit allow rule; heuristic allow → TurnDefault; approved prompt → as the request asked. Pure.
 */
import { type Decision, type MatchOptions, type RuleMatch, strictest } from '../rules/index.js';
import type { ScriptDecision, DecideContext, SubcommandDecision } from './types.js';
import { analyzeScript, nestedShell, unwrapCommand } from '../script/index.js';
import { codeLoadingVariables } from '../heuristics/index.js';
import type { CommandContext } from './command.js';
import { entryDecision, heredocEntry, loadingInSandbox, mayLeaveSandbox, subcommandEntry, wholeScriptEntry, type Entry } from './entries.js';
import { decideEntry } from './entry-decision.js';
import { amendmentForAllow, amendmentForPrompt, deriveRequestedAmendment } from './amendment-proposal.js';
import { everyCommandExplicitlyAllowed, requirementFor, type ExecApprovalRequirement } from './requirement.js';
import { escalationRequested, explainUnmatchedCommand } from './unmatched.js';
import { writableRootsFor } from './exec-writable.js';
import { narrowsTurn, perExecEntry, perExecSandbox, perExecWrites, writeEntry } from './per-exec.js';

export type { ScriptDecision, DecideContext, SubcommandDecision } from './types.js';

/** An argv: a `bash|zsh|sh -c|-lc script` invocation (Codex's shell names) or a bare command. */
export function decideInvocation(argv: readonly string[], ctx: DecideContext): ScriptDecision {
  const inv = nestedShell([...argv]);
  if (inv) return decideWholeInvocation([...argv], inv.script, ctx);
  const words = [...argv];
  const entry = subcommandEntry({ ...unwrapCommand(words), argv: words, assignments: [], redirects: false }, evalContext(ctx, false));
  return finish(words, false, [], [entry], ctx);
}

/** A script for a given shell, whatever the shell's path (what gate-sh itself runs). */
export function decideScript(shell: string, flag: '-c' | '-lc', script: string, ctx: DecideContext): ScriptDecision {
  return decideWholeInvocation([shell, flag, script], script, ctx);
}

function evalContext(ctx: DecideContext, usedComplexParsing: boolean): CommandContext {
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

function decideWholeInvocation(command: string[], script: string, ctx: DecideContext): ScriptDecision {
  const a = analyzeScript(script, ctx.readSource ? { readSource: ctx.readSource } : {});
  if (a.kind === 'plain') {
    const ec = evalContext(ctx, false);
    // An empty script: Codex evaluates the whole argv.
    const subs = a.commands.length > 0 ? a.commands : [{ argv: command, assignments: [], inner: [], redirects: false }];
    return finish(command, false, [], subs.map((s) => subcommandEntry(s, ec)), ctx);
  }
  const ec = evalContext(ctx, true);
  const head = a.heredocPrefix ? heredocEntry(a.heredocPrefix, ec) : wholeScriptEntry(command, a, ec);
  const literals = a.literalCommands.map((s) => subcommandEntry(s, ec, 'literal'));
  // Codex's heredoc fallback (`python3 <<'PY' ... PY`) decides the command the heredoc feeds; when that
  // command is asked about even on its own (an interpreter running code from stdin that no exec shows),
  // Codex asks up front, and so does gate-sh: only a prompt that comes from complexity is left per exec
  const prefixAsked = a.heredocPrefix ? entryDecision(heredocEntry(a.heredocPrefix, evalContext(ctx, false))) !== 'allow' : false;
  const writes = prefixAsked ? null : perExecWrites(ctx, a, head);
  if (writes) return finish(command, true, a.reasons, [perExecEntry(command), ...writes.map((w) => writeEntry(w, ctx.cwd!)), ...literals], ctx, true);
  return finish(command, true, a.reasons, [head, ...literals], ctx);
}

/** The model-requested prefix rule, when adding it would allow every command (Codex §4.5). */
function requestedAmendment(ctx: DecideContext, matchedRules: RuleMatch[], commands: string[][]): string[] | null {
  if (!ctx.prefixRule) return null;
  const ec = evalContext(ctx, false);
  const fallback = (c: string[]) => explainUnmatchedCommand(c, ec.unmatched).decision;
  return deriveRequestedAmendment({ prefixRule: ctx.prefixRule, matchedRules, policy: ctx.policy, commands, fallback, options: ec.options });
}

function finish(command: string[], complex: boolean, reasons: string[], asWritten: Entry[], ctx: DecideContext, perExec = false): ScriptDecision {
  const all: RuleMatch[] = asWritten.flatMap((e) => e.evaluated.flatMap((x) => x.matches));
  // The model's own code-loading assignments (`PYTHONPATH=src pytest`, `LD_LIBRARY_PATH=. ./app`) ask where
  // the command would leave the turn's sandbox by the rules' allow or an escalation the request asked for,
  // and under untrusted (only known-safe commands run unasked there); elsewhere it runs in the sandbox (or
  // with no sandbox at all) and they load nothing the model could not run by itself: as after `export`.
  const leaves = asWritten.every((e) => mayLeaveSandbox(e, true)) && everyCommandExplicitlyAllowed(all);
  const asks = leaves || ctx.approvalPolicy === 'untrusted' || escalationRequested(ctx.sandboxPermissions);
  const entries = asks ? asWritten : asWritten.map(loadingInSandbox);
  const amendable = entries.every((e) => e.amendable);
  const bypass = entries.every((e) => mayLeaveSandbox(e)) && everyCommandExplicitlyAllowed(all);
  const roots = ctx.codeLoading?.writableRoots ?? writableRootsFor(ctx.sandboxPolicy, ctx.cwd);
  const loadingNames = ctx.env ? codeLoadingVariables(ctx.env, { ...ctx.codeLoading, writableRoots: roots }).map((v) => v.name) : [];
  const requested = (m: RuleMatch[], c: string[][]) => requestedAmendment(ctx, m, c);
  const subcommands = entries.map((e, index) => decideEntry(e, index, { ctx, bypass, loadingNames, requestedAmendment: requested }));

  const decision = strictest(subcommands.map((s) => s.decision)) ?? 'allow';
  // Before approval-policy rejections: Codex's reason texts depend on what the rules and heuristics said.
  const raw = strictest(subcommands.map((s) => s.decided_by.decision)) ?? 'allow';
  const promptAmendment = amendable
    ? (requested(
        all,
        entries.map((e) => e.argv),
      ) ?? amendmentForPrompt(all))
    : null;
  const requirement = overallRequirement(command, raw, subcommands, all, ctx, {
    bypass,
    promptAmendment,
    skipAmendment: amendable ? amendmentForAllow(all) : null,
  });
  const askedUpFront = subcommands.filter((s) => s.action === 'prompt').map((s) => s.argv);
  const sandbox = perExec ? perExecSandbox(ctx.sandboxPolicy, entries.some((e) => e.kind === 'write')) : null;
  // the whole-script entry says where it runs: its Run is in that sandbox, not in the turn's as such
  if (sandbox) subcommands[0] = { ...subcommands[0], sandbox };
  return {
    decision,
    complex,
    complex_reasons: reasons,
    command,
    requirement,
    bypass_sandbox: bypass && requirement.type === 'skip',
    subcommands,
    per_exec: perExec,
    asked_up_front: askedUpFront,
    per_exec_sandbox: sandbox,
    sandbox_narrowed: sandbox !== null && narrowsTurn(sandbox, ctx.sandboxPolicy),
  };
}

interface Amendments {
  bypass: boolean;
  promptAmendment: string[] | null;
  skipAmendment: string[] | null;
}

/** Codex-compatible requirement over every evaluated command; reasons name the original argv. */
function overallRequirement(
  command: string[],
  raw: Decision,
  subs: SubcommandDecision[],
  all: RuleMatch[],
  ctx: DecideContext,
  o: Amendments,
): ExecApprovalRequirement {
  const evaluation = { decision: raw, matchedRules: all };
  const rejected = subs.find((s) => s.requirement.type === 'forbidden');
  if (raw === 'forbidden') return requirementFor({ command, evaluation, approvalPolicy: ctx.approvalPolicy, promptAmendment: null, skipAmendment: null });
  if (rejected) return rejected.requirement; // a prompt the approval policy may not show
  if (raw === 'prompt') {
    const r = requirementFor({ command, evaluation, approvalPolicy: ctx.approvalPolicy, promptAmendment: o.promptAmendment, skipAmendment: null });
    const own = subs.find((s) => s.requirement.type === 'needs_approval' && s.requirement.reason);
    if (r.type === 'needs_approval' && r.reason === null && own?.requirement.type === 'needs_approval') return { ...r, reason: own.requirement.reason };
    return r;
  }
  return { type: 'skip', bypass_sandbox: o.bypass, proposed_execpolicy_amendment: o.skipAmendment };
}
