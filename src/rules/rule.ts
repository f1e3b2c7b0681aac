/** One prefix rule as registered by a `prefix_rule` call (first-position alternatives already expanded). */
import type { Decision } from './decision.js';
import { debugPattern, rustStr, type PrefixPattern } from './pattern.js';

/** Where a rule was written: 1-based, of the prefix_rule call. */
export interface RuleSource {
  file: string;
  line: number;
  col: number;
}

export interface PrefixRule {
  readonly pattern: PrefixPattern;
  readonly decision: Decision;
  readonly justification?: string;
  /** Codex 0.169.0's `canonical_matching` flag; accepted and kept, matching is unchanged */
  readonly canonicalMatching: boolean;
  readonly source: RuleSource;
}

const DEBUG_DECISION: Record<Decision, string> = { allow: 'Allow', prompt: 'Prompt', forbidden: 'Forbidden' };

export function debugDecision(d: Decision): string {
  return DEBUG_DECISION[d];
}

export function debugOption(s: string | undefined): string {
  return s === undefined ? 'None' : `Some(${rustStr(s)})`;
}

/** Rust `Debug` of a rule, as it appears in Codex's "expected every example to match" error. */
export function debugRule(r: PrefixRule): string {
  return `PrefixRule { pattern: ${debugPattern(r.pattern, r.canonicalMatching)}, decision: ${debugDecision(r.decision)}, justification: ${debugOption(r.justification)} }`;
}
