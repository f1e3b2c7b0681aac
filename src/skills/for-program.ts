/** Is this program a skill script? Pure: the program's absolute path against discovered skills. */
import type { Skill } from './skill.js';

const under = (p: string, dir: string) => p.startsWith(dir.replace(/\/$/, '') + '/scripts/');

/**
 * The skill whose `scripts/` folder holds `absPath` (as given or with symlinks resolved: pass both when
 * they differ); the innermost skill when skills nest; null when it is no skill script.
 */
export function skillForProgram(absPath: string | readonly string[], skills: readonly Skill[]): Skill | null {
  const paths = typeof absPath === 'string' ? [absPath] : absPath;
  let best: Skill | null = null;
  for (const s of skills)
    if (paths.some((p) => under(p, s.dir) || under(p, s.realDir)) && (best === null || s.realDir.length > best.realDir.length)) best = s;
  return best;
}
