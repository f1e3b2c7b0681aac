/**
 * `match` / `not_match` examples of a prefix_rule: parsed at the call (strings split like POSIX shlex),
 * checked at the end of the file against a policy of just that call's rules (Codex's messages).
 */
import { PolicyError } from './error.js';
import { rustStr } from './pattern.js';
import { Policy, type PrefixRuleMatch } from './policy.js';
import { debugDecision, debugOption, debugRule, type PrefixRule } from './rule.js';
import { shlexJoin, shlexSplit } from './shlex.js';
import type { Pos } from './starlark/parser.js';
import { typeName, type Value } from './starlark/value.js';

/** A rule-argument problem; the caller adds the location. */

export interface PendingExamples {
  rules: PrefixRule[];
  match: string[][];
  notMatch: string[][];
  site: Pos;
}

export function parseExamples(v: Value | undefined): string[][] {
  if (v === undefined) return [];
  return (v as { items: Value[] }).items.map((ex) => {
    if (typeof ex === 'string') {
      if (ex === '') throw new PolicyError('invalid example: example cannot be an empty string');
      const words = shlexSplit(ex);
      if (!words) throw new PolicyError('invalid example: example string has invalid shell syntax');
      if (words.length === 0) throw new PolicyError('invalid example: example cannot be an empty string');
      return words;
    }
    if (ex && typeof ex === 'object' && ex.kind === 'list') {
      if (ex.items.length === 0) throw new PolicyError('invalid example: example cannot be an empty list');
      for (const t of ex.items) if (typeof t !== 'string') throw new PolicyError(`invalid example: example tokens must be strings (got ${typeName(t)})`);
      return ex.items as string[];
    }
    throw new PolicyError(`invalid example: example must be a string or list of strings (got ${typeName(ex)})`);
  });
}

function debugMatch(m: PrefixRuleMatch): string {
  const prefix = `[${m.matchedPrefix.map(rustStr).join(', ')}]`;
  return `PrefixRuleMatch { matched_prefix: ${prefix}, decision: ${debugDecision(m.decision)}, resolved_program: ${debugOption(m.resolvedProgram)}, justification: ${debugOption(m.justification)} }`;
}

/** Parse rule files in order into one Policy. Throws PolicyError (file:line:col: Codex's message). */

/** not_match first (the first example any rule matches fails), then every match example must match. */
export function checkExamples(p: PendingExamples, hosts: ReadonlyMap<string, readonly string[]>, file: string): void {
  const local = new Policy({ rules: p.rules, hostExecutables: hosts, networkRules: [], files: [] });
  const opts = { resolveHostExecutables: true, hardened: false };
  for (const ex of p.notMatch) {
    const m = local.matchesForCommand(ex, opts)[0] as PrefixRuleMatch | undefined;
    if (m) throw new PolicyError(`expected example to not match rule \`${debugMatch(m)}\`: ${shlexJoin(ex)}`, { file, ...p.site });
  }
  const unmatched = p.match.filter((ex) => local.matchesForCommand(ex, opts).length === 0);
  if (unmatched.length) {
    const rs = p.rules.map((r) => rustStr(debugRule(r))).join(', ');
    const exs = unmatched.map((ex) => rustStr(shlexJoin(ex))).join(', ');
    throw new PolicyError(`expected every example to match at least one rule. rules: [${rs}]; unmatched examples: [${exs}]`, { file, ...p.site });
  }
}
