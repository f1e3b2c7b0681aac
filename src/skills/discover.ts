/**
 * Finding skills under skill roots (the I/O edge of src/skills/): every folder holding a SKILL.md, up to
 * MAX_DEPTH below a root, not inside another skill, hidden folders and node_modules skipped, symlinked
 * folders followed once. A skill whose SKILL.md or agents/openai.yaml is malformed is still returned,
 * with `error` set: its scripts are then denied with that message rather than treated as ordinary programs.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { homedir } from 'node:os';
import { parseFrontMatter, parseYamlMap } from './front-matter.js';
import { parseDeclared } from './declared.js';
import { compileProfile } from './profile.js';
import { SkillError, type DeclaredPermissions, type Skill } from './skill.js';

export const MAX_DEPTH = 4;

export interface DiscoverOptions {
  home?: string;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readIfExists(p: string): string | null {
  try {
    return readFileSync(p, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SkillError(`${p}: cannot read: ${(e as Error).message}`);
  }
}

export function discoverSkills(roots: readonly string[], o: DiscoverOptions = {}): Skill[] {
  const out: Skill[] = [];
  const seen = new Set<string>();
  const walk = (dir: string, depth: number) => {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch {
      return;
    }
    if (seen.has(real)) return;
    seen.add(real);
    const md = posix.join(dir, 'SKILL.md');
    if (readIfExists(md) !== null) {
      out.push(loadSkill(dir, real, o.home ?? process.env.HOME ?? homedir()));
      return;
    }
    if (depth >= MAX_DEPTH) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) if (!n.startsWith('.') && n !== 'node_modules' && isDir(posix.join(dir, n))) walk(posix.join(dir, n), depth + 1);
  };
  for (const r of roots) if (isDir(r)) walk(r, 0);
  return out;
}

/** One skill folder; errors are kept on the skill (see above). */
export function loadSkill(dir: string, realDir: string, home: string): Skill {
  const file = posix.join(dir, 'SKILL.md');
  const skill: Skill = { name: posix.basename(dir), description: '', dir, realDir, file, declared: null, profile: null };
  try {
    const fm = parseFrontMatter(readIfExists(file) ?? '', file);
    if (typeof fm.name === 'string' && fm.name.trim()) skill.name = fm.name.trim();
    if (typeof fm.description === 'string') skill.description = fm.description;
    const fromMd = parseDeclared(fm.permissions, file);
    const yamlFile = posix.join(dir, 'agents', 'openai.yaml');
    const yamlText = readIfExists(yamlFile);
    const fromYaml = yamlText === null ? null : parseDeclared(parseYamlMap(yamlText, yamlFile).permissions, yamlFile);
    if (fromMd && fromYaml && JSON.stringify(fromMd) !== JSON.stringify(fromYaml))
      throw new SkillError(`${file}: permissions are declared both here and in ${yamlFile}, differently; keep one`);
    const declared: DeclaredPermissions | null = fromMd ?? fromYaml;
    skill.declared = declared;
    skill.profile = declared ? compileProfile(declared, { skillDir: realDir, home, file }) : null;
  } catch (e) {
    if (!(e instanceof SkillError)) throw e;
    skill.error = e.message;
  }
  return skill;
}
