/**
 * Which `prefix_rule(..., decision="allow")` to propose with a prompt or a skip (Codex §4.5). Pure.
 */
import type { Fallback, MatchOptions, Policy, RuleMatch } from '../rules/index.js';
import { isPolicyRuleMatch } from './requirement.js';

/** Prefixes a model may never get as a standing rule: each one would allow arbitrary code. */
export const BANNED_PREFIX_SUGGESTIONS: readonly (readonly string[])[] = [
  ['python3'], ['python3', '-'], ['python3', '-c'], ['python'], ['python', '-'], ['python', '-c'], ['py'], ['py', '-3'],
  ['pythonw'], ['pyw'], ['pypy'], ['pypy3'], ['git'], ['bash'], ['bash', '-lc'], ['sh'], ['sh', '-c'], ['sh', '-lc'],
  ['zsh'], ['zsh', '-lc'], ['/bin/zsh'], ['/bin/zsh', '-lc'], ['/bin/bash'], ['/bin/bash', '-lc'], ['pwsh'],
  ['pwsh', '-Command'], ['pwsh', '-c'], ['powershell'], ['powershell', '-Command'], ['powershell', '-c'],
  ['powershell.exe'], ['powershell.exe', '-Command'], ['powershell.exe', '-c'], ['env'], ['sudo'], ['node'],
  ['node', '-e'], ['perl'], ['perl', '-e'], ['ruby'], ['ruby', '-e'], ['php'], ['php', '-r'], ['lua'], ['lua', '-e'],
  ['osascript'],
];

export function isBannedPrefixSuggestion(prefix: readonly string[]): boolean {
  return BANNED_PREFIX_SUGGESTIONS.some((b) => b.length === prefix.length && b.every((t, i) => t === prefix[i]));
}

export interface RequestedAmendmentInput {
  prefixRule: readonly string[] | null | undefined;
  matchedRules: readonly RuleMatch[];
  policy: Policy;
  commands: readonly string[][];
  fallback: Fallback;
  options: MatchOptions;
}

/** A model-requested prefix rule, offered only when it is not banned, no rule matched yet, and adding it
 * as an allow rule would make every evaluated command `allow`. */
export function deriveRequestedAmendment(i: RequestedAmendmentInput): string[] | null {
  const p = i.prefixRule;
  if (!p || p.length === 0 || isBannedPrefixSuggestion(p)) return null;
  if (i.matchedRules.some(isPolicyRuleMatch)) return null;
  let amended: Policy;
  try {
    amended = i.policy.withPrefixRule([...p], 'allow');
  } catch {
    return null;
  }
  const all = i.commands.every((c) => amended.check(c, i.options, i.fallback).decision === 'allow');
  return all ? [...p] : null;
}

/** With a prompt: the first command a heuristic prompted for, unless a rule prompted. */
export function amendmentForPrompt(matches: readonly RuleMatch[]): string[] | null {
  if (matches.some((m) => isPolicyRuleMatch(m) && m.decision === 'prompt')) return null;
  for (const m of matches) if (m.type === 'heuristicsRuleMatch' && m.decision === 'prompt') return [...m.command];
  return null;
}

/** With a skip: the first command a heuristic allowed, unless any rule matched (offered on a failed run). */
export function amendmentForAllow(matches: readonly RuleMatch[]): string[] | null {
  if (matches.some(isPolicyRuleMatch)) return null;
  for (const m of matches) if (m.type === 'heuristicsRuleMatch' && m.decision === 'allow') return [...m.command];
  return null;
}
