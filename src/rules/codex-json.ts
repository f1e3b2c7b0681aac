/** `codex execpolicy check` output: keys in Codex's order, optional keys omitted, serde_json formatting. */
import type { Evaluation, RuleMatch } from './policy.js';

function matchJson(m: RuleMatch): unknown {
  if (m.type === 'heuristicsRuleMatch') return { heuristicsRuleMatch: { command: m.command, decision: m.decision } };
  const o: Record<string, unknown> = { matchedPrefix: m.matchedPrefix, decision: m.decision };
  if (m.resolvedProgram !== undefined) o.resolvedProgram = m.resolvedProgram;
  if (m.justification !== undefined) o.justification = m.justification;
  return { prefixRuleMatch: o };
}

export function formatCheckOutput(e: Evaluation, pretty: boolean): string {
  const o: Record<string, unknown> = { matchedRules: e.matchedRules.map(matchJson) };
  if (e.decision !== undefined) o.decision = e.decision;
  return pretty ? JSON.stringify(o, null, 2) : JSON.stringify(o);
}
