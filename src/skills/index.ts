export { defaultSkillRoots } from './roots.js';
export { discoverSkills, loadSkill } from './discover.js';
export { skillForProgram } from './for-program.js';
export { skillExecution, SKILL_AVAILABLE_DECISIONS, type SkillRun } from './execution.js';
export { compileProfile } from './profile.js';
export { parseFrontMatter } from './front-matter.js';
export { SkillError, type Skill, type DeclaredPermissions } from './skill.js';
export { lookupSkill, skillsFor, type SkillLookup } from './lookup.js';
