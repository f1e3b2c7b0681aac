/**
 * How a skill script runs (the pure function the decision layer calls):
 *   declared permissions → Permissions(profile), exactly;   none declared → TurnDefault.
 * Never Unsandboxed: only a human approval that explicitly asks for it can widen a skill script, and a
 * cached `approved_for_session` keeps this same execution (the approval key includes it).
 * A skill that could not be read (malformed SKILL.md) is denied with the reason naming the file.
 */
import type { EscalationExecution, ReviewDecision } from '../protocol/index.js';
import type { Skill } from './skill.js';

export type SkillRun = { ok: true; execution: EscalationExecution } | { ok: false; reason: string };

export function skillExecution(skill: Skill): SkillRun {
  if (skill.error) return { ok: false, reason: `skill '${skill.name}' is unusable: ${skill.error}` };
  if (skill.profile) return { ok: true, execution: { type: 'Permissions', profile: skill.profile } };
  return { ok: true, execution: { type: 'TurnDefault' } };
}

/** What an approver may answer for a skill script (Codex §6.4). */
export const SKILL_AVAILABLE_DECISIONS: readonly ReviewDecision[] = ['approved', 'approved_for_session', 'abort'];
