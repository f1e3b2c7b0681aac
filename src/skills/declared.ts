/**
 * Declared permissions: `permissions: {network, file_system: {read, write}}` in SKILL.md front matter or in
 * Codex's `agents/openai.yaml`. Checked for shape here (other keys such as `macos` are ignored: they mean
 * nothing on Linux); compiled to absolute paths in profile.ts.
 */
import { SkillError, type DeclaredPermissions } from './skill.js';

function paths(v: unknown, where: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((p) => typeof p !== 'string' || p === ''))
    throw new SkillError(`${where} must be a list of paths`);
  return v as string[];
}

/** null when nothing is declared. */
export function parseDeclared(v: unknown, file: string): DeclaredPermissions | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw new SkillError(`${file}: permissions must be a mapping (network, file_system)`);
  const o = v as Record<string, unknown>;
  const out: DeclaredPermissions = {};
  if (o.network !== undefined) {
    if (typeof o.network !== 'boolean') throw new SkillError(`${file}: permissions.network must be true or false`);
    out.network = o.network;
  }
  if (o.file_system !== undefined && o.file_system !== null) {
    if (typeof o.file_system !== 'object' || Array.isArray(o.file_system))
      throw new SkillError(`${file}: permissions.file_system must be a mapping (read, write)`);
    const f = o.file_system as Record<string, unknown>;
    const read = paths(f.read, `${file}: permissions.file_system.read`);
    const write = paths(f.write, `${file}: permissions.file_system.write`);
    out.file_system = { ...(read ? { read } : {}), ...(write ? { write } : {}) };
  }
  return out;
}
