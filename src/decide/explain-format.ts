/** Human rendering of an ScriptDecision for `gate explain` (pure). */
import type { ScriptDecision, DecidedBy, SubcommandDecision } from './types.js';
import { formatAction, reviewDecisionKind } from '../protocol/index.js';
import { formatAllowPrefixRule, shlexJoin } from '../rules/index.js';
import type { SandboxPolicy } from '../sandbox/index.js';

export interface FormatContext {
  approvalPolicy: string;
  sandbox: string;
  ruleFiles: string[];
}

export function formatSource(s: DecidedBy): string {
  if (s.type === 'rule') {
    const why = s.justification ? ` (${s.justification})` : '';
    const resolved = s.resolved_program ? ` [resolved ${s.resolved_program}]` : '';
    return `rule ${s.file}:${s.line}  prefix ${shlexJoin(s.matched_prefix)} → ${s.decision}${why}${resolved}`;
  }
  return `heuristic ${s.name} → ${s.decision}`;
}

function formatSub(s: SubcommandDecision, n: number): string[] {
  const label =
    s.kind === 'script' ? 'whole script' : s.kind === 'literal' ? 'literal command' : s.kind === 'write' ? 'file write by a redirection' : 'subcommand';
  const out = [`[${n}] ${shlexJoin(s.argv)}    (${label})`];
  if (s.assignments?.length) out.push(`    assignments  ${s.assignments.join(' ')}`);
  for (const e of s.evaluated) {
    const what = e.role === 'inner' || e.role === 'assignment' ? `${e.role} ${shlexJoin(e.argv)}: ` : '';
    for (const src of e.sources) out.push(`    ${what}${formatSource(src)}`);
  }
  if (s.opaque) out.push(`    opaque       ${s.opaque}`);
  if (s.danger) out.push(`    danger       ${s.danger}`);
  const exec = s.execution ? ` (${s.execution.type})` : '';
  out.push(`    decision     ${s.decision}`);
  if (s.action === 'prompt') {
    out.push(`    action       prompt${exec}; if approved: ${formatAction(s.on_approval ?? { type: 'Run' })}`);
    if (s.requirement.type === 'needs_approval' && s.requirement.reason) out.push(`    reason       ${s.requirement.reason}`);
    if (s.available_decisions)
      out.push(`    decisions    ${s.available_decisions.map(reviewDecisionKind).join(', ')}`);
  } else if (s.sandbox && s.action.type !== 'Deny') {
    // a per-exec script: its bash runs in this sandbox, not in the turn's as such
    out.push(`    action       ${formatAction(s.action)} (${sandboxName(s.sandbox)}; every exec decided when it starts)`);
  } else {
    out.push(`    action       ${formatAction(s.action)}${s.action.type === 'Deny' ? '' : exec}`);
  }
  if (s.proposed_execpolicy_amendment) out.push(`    amendment    ${formatAllowPrefixRule(s.proposed_execpolicy_amendment)}`);
  return out;
}

function sandboxName(p: SandboxPolicy): string {
  return p.type === 'read-only' ? 'in a read-only sandbox' : `in the turn sandbox, ${p.type}, once the writes are approved`;
}

export function formatExplanation(a: ScriptDecision, ctx: FormatContext): string {
  const lines = [
    `command: ${shlexJoin(a.command)}`,
    `policy: approval ${ctx.approvalPolicy}, sandbox ${ctx.sandbox}, ${ctx.ruleFiles.length} rule file(s)${ctx.ruleFiles.length ? ': ' + ctx.ruleFiles.join(', ') : ''}`,
    `decision: ${a.decision}${a.bypass_sandbox ? ' (every command explicitly allowed: may run unsandboxed)' : ''}`,
  ];
  if (a.complex) {
    lines.push(`complex script: ${a.complex_reasons.join('; ') || 'not fully inspectable'}`);
    const lits = a.subcommands.filter((s) => s.kind === 'literal');
    lines.push(lits.length ? `literal commands found (checked for forbidden/prompt rules and danger only): ${lits.length}` : 'literal commands found: none');
  } else {
    lines.push(`plain script: ${a.subcommands.length} subcommand(s)`);
  }
  if (a.per_exec && a.per_exec_sandbox) {
    lines.push(
      'decided per exec: every program it starts is judged when it starts (known-safe and allowed run, forbidden is denied, anything else is asked then)',
    );
    const where =
      a.per_exec_sandbox.type !== 'read-only'
        ? 'the turn sandbox once the writes below are approved'
        : a.sandbox_narrowed
          ? 'read-only, stricter than the turn\'s (a write it tries fails, and is offered as a sandbox-failure rerun, even when the script exits 0)'
          : 'read-only (a write it tries fails, and is offered as a sandbox-failure rerun)';
    lines.push(`sandbox: ${where}`);
  }
  lines.push(a.asked_up_front.length ? `asked up front: ${a.asked_up_front.map((c) => shlexJoin(c)).join('; ')}` : 'asked up front: nothing');
  if (a.requirement.type === 'forbidden') lines.push(`reason: ${a.requirement.reason}`);
  else if (a.requirement.type === 'needs_approval' && a.requirement.reason) lines.push(`reason: ${a.requirement.reason}`);
  lines.push('');
  a.subcommands.forEach((s, i) => lines.push(...formatSub(s, i + 1)));
  return lines.join('\n') + '\n';
}
