/**
 * Agent skills (`<skill>/SKILL.md` + `<skill>/scripts/*`): discovery under the skill roots, the permissions a
 * skill declares, and which skill a program belongs to. The layer's public surface. Reads SKILL.md files
 * (discover.ts, lookup.ts); the rest is pure. Trust: a SKILL.md is the skill author's text, parsed
 * strictly; a skill never gets wider permissions than it declares (or the turn's, when it declares none).
 */
export { defaultSkillRoots } from './roots.js';
export { discoverSkills, loadSkill } from './discover.js';
export { skillForProgram } from './for-program.js';
export { skillExecution, SKILL_AVAILABLE_DECISIONS, type SkillRun } from './execution.js';
export { compileProfile } from './profile.js';
export { parseFrontMatter } from './front-matter.js';
export { SkillError, type Skill, type DeclaredPermissions } from './skill.js';
export { lookupSkill, skillsFor, type SkillLookup } from './lookup.js';
