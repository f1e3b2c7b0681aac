/**
 * The skill side of one exec decision, in the shape the decision layer takes (src/decide/intercepted.ts
 * `ctx.skill = { permissions }`). Pure over discovered skills; `skillsFor` is the I/O to get them.
 */
import type { PermissionProfile } from '../sandbox/index.js';
import type { Env } from '../paths/index.js';
import { discoverSkills } from './discover.js';
import { skillForProgram } from './for-program.js';
import { defaultSkillRoots } from './roots.js';
import type { Skill } from './skill.js';

export type SkillLookup =
  | { kind: 'none' }
  /** a skill script: run with exactly `exec.permissions` (absent → the turn sandbox), after an approval */
  | { kind: 'skill'; skill: Skill; exec: { permissions?: PermissionProfile } }
  /** a script of a skill that could not be read: deny with `reason` (it names the file) */
  | { kind: 'unusable'; skill: Skill; reason: string };

export function lookupSkill(program: string | readonly string[], skills: readonly Skill[]): SkillLookup {
  const skill = skillForProgram(program, skills);
  if (!skill) return { kind: 'none' };
  if (skill.error) return { kind: 'unusable', skill, reason: `skill '${skill.name}' is unusable: ${skill.error}` };
  return { kind: 'skill', skill, exec: skill.profile ? { permissions: skill.profile } : {} };
}

/** Skills visible from `cwd` under the default roots (plus `extraRoots` from the config). */
export function skillsFor(env: Env, cwd: string, extraRoots: readonly string[] = []): Skill[] {
  return discoverSkills([...defaultSkillRoots(env, cwd), ...extraRoots], { home: env.HOME });
}
