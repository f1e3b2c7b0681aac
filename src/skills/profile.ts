/**
 * Declared permissions → a PermissionProfile with absolute, lexically normalised paths. Relative paths
 * are against the skill folder and must stay inside it; `~` is the home folder; absolute paths stay as
 * written (the sandbox resolves symlinks and refuses `/` writes). When reads are restricted, the skill's
 * own folder is added to them: its scripts must be readable to run.
 */
import { posix } from 'node:path';
import type { PermissionProfile } from '../sandbox/index.js';
import { SkillError, type DeclaredPermissions } from './skill.js';

export interface CompileContext {
  skillDir: string;
  home: string;
  file: string;
}

function compilePath(p: string, kind: string, c: CompileContext): string {
  let abs: string;
  const home = p === '~' || p.startsWith('~/');
  if ((home || p.startsWith('/')) && p.split('/').includes('..'))
    throw new SkillError(`${c.file}: ${kind} path '${p}' contains '..': give the path itself`);
  if (home) abs = posix.join(c.home, p.slice(1));
  else if (p.startsWith('/')) abs = p;
  else {
    abs = posix.resolve(c.skillDir, p);
    if (abs !== c.skillDir && !abs.startsWith(c.skillDir + '/'))
      throw new SkillError(`${c.file}: ${kind} path '${p}' leaves the skill folder; use an absolute path to mean a folder outside it`);
  }
  const n = posix.normalize(abs);
  if (kind === 'write' && n === '/') throw new SkillError(`${c.file}: write access to '/' is not a sandbox; declare specific folders`);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

export function compileProfile(d: DeclaredPermissions, c: CompileContext): PermissionProfile {
  const dedupe = (xs: string[]) => [...new Set(xs)];
  const read = dedupe((d.file_system?.read ?? []).map((p) => compilePath(p, 'read', c)));
  const write = dedupe((d.file_system?.write ?? []).map((p) => compilePath(p, 'write', c)));
  if (read.length > 0 && !read.includes(c.skillDir)) read.push(c.skillDir);
  const file_system = { ...(read.length ? { read } : {}), ...(write.length ? { write } : {}) };
  return { network: d.network === true, ...(read.length || write.length ? { file_system } : {}) };
}
