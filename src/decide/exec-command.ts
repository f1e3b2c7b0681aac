/**
 * Deciding one intercepted exec: `[program, argv[1..]]` against the rules (hardened by default) with
 * Codex's unmatched-command fallback, remembering which heuristic decided (for the audit log).
 */
import type { Decision, Evaluation, MatchOptions, Policy } from '../rules/index.js';
import type { DecidedBy } from './types.js';
import { explainUnmatchedCommand, type UnmatchedContext, type UnmatchedDecision } from './unmatched.js';
import { isPolicyRuleMatch } from './requirement.js';
import { toSource } from './command.js';
import { join } from 'node:path';
import { GATE_INSTALL_ROOT } from '../sandbox/index.js';
import { nestedShell } from '../script/index.js';

export interface ExecCommandDecision {
  evaluation: Evaluation;
  decision: Decision;
  /** A rule (not a heuristic) had the final decision. */
  byPolicy: boolean;
  decidedBy: DecidedBy;
}

/** Folders only root writes, and gate-sh's own nested-shell shims (read-only in every sandbox): a program
 * there is what its name says, so the heuristics decide it by name. */
export const GATE_SHIMS_BIN = join(GATE_INSTALL_ROOT, 'shims', 'bin');
export const SYSTEM_BIN = new Set(['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/local/sbin', GATE_SHIMS_BIN]);

/** `/usr/bin/cat x` → `cat x` for the heuristics (known-safe wants a bare name: `./cat` could be anything). */
export function systemName(c: string[]): string[] {
  const p = c[0] ?? '';
  const slash = p.lastIndexOf('/');
  return slash > 0 && SYSTEM_BIN.has(p.slice(0, slash)) ? [p.slice(slash + 1), ...c.slice(1)] : c;
}

const PROGRAM: UnmatchedDecision = { decision: 'allow', reason: 'program' };

export function decideExecCommand(policy: Policy, commands: string[][], options: MatchOptions, unmatched: UnmatchedContext): ExecCommandDecision {
  const heuristics: UnmatchedDecision[] = [];
  const evaluation = policy.checkMultiple(commands, options, (c) => {
    // a program's own exec: the heuristics decide what the model wrote, the sandbox contains the rest. A shell's
    // -c script is parsed by them only when it is the model's: a program's may be long, and is parsed again at
    // each of its execs (configure's `sh -c` feature test, 10 KB, at every run: about 10 ms of the daemon's time)
    let h = unmatched.programOwn && nestedShell(c) && unmatched.programOwn() ? PROGRAM : explainUnmatchedCommand(systemName(c), unmatched);
    if (h.decision !== 'allow' && unmatched.programOwn?.()) h = PROGRAM;
    heuristics.push(h);
    return h.decision;
  });
  const decision: Decision = evaluation.decision ?? 'allow';
  const byPolicy = evaluation.matchedRules.some((m) => isPolicyRuleMatch(m) && m.decision === decision);
  let h = 0; // heuristic matches come in the order the fallback was called
  const sources = evaluation.matchedRules.map((m) => {
    const x = m.type === 'heuristicsRuleMatch' ? heuristics[h++] : undefined;
    return toSource(m, x && { decision: x.decision, name: x.reason });
  });
  return { evaluation, decision, byPolicy, decidedBy: sources.find((s) => s.decision === decision) ?? sources[0] };
}
