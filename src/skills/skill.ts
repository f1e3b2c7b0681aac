/** A skill: a folder with SKILL.md; its scripts live in `<dir>/scripts/`. */
import type { PermissionProfile } from '../sandbox/index.js';

/** What a skill declares (Codex `agents/openai.yaml` shape; gate-sh also reads it from SKILL.md). */
export interface DeclaredPermissions {
  network?: boolean;
  file_system?: { read?: string[]; write?: string[] };
}

export interface Skill {
  name: string;
  description: string;
  /** the folder as found under its root */
  dir: string;
  /** the folder with symlinks resolved (a program path may be either) */
  realDir: string;
  /** SKILL.md, for messages */
  file: string;
  /** null: none declared → the turn sandbox */
  declared: DeclaredPermissions | null;
  /** declared permissions compiled to absolute paths; null when none declared */
  profile: PermissionProfile | null;
  /** the skill could not be read as declared (malformed front matter, bad paths): its scripts are denied */
  error?: string;
}

export class SkillError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SkillError';
  }
}
