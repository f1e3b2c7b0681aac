/**
 * A PermissionProfile's paths, checked and resolved: absolute, no `..`, symlinks resolved, deduplicated.
 * Anything that would silently widen the profile is an error instead: relative or `..` paths (relative to
 * what?), a write of `/` (that is no sandbox), a path that does not exist (bwrap cannot bind it).
 */
import type { PermissionProfile } from './policy.js';
import type { FsView } from './fs-view.js';
import { SandboxError } from './errors.js';
import { normAbs } from './mounts.js';

export interface ResolvedProfile {
  network: boolean;
  /** 'all' = the whole filesystem readable (no `read` list given, or `/` in it) */
  read: 'all' | string[];
  write: string[];
  /** the read paths named, even when the whole filesystem is readable: a hidden secret location named
   *  there is granted (src/sandbox/secrets.ts) */
  named: string[];
}

function checkPath(p: unknown, kind: 'read' | 'write'): string {
  if (typeof p !== 'string' || p === '') throw new SandboxError(`permission profile: ${kind} paths must be non-empty strings, got ${JSON.stringify(p)}`);
  if (!p.startsWith('/')) throw new SandboxError(`permission profile: ${kind} path '${p}' is relative: give an absolute path`);
  if (p.split('/').includes('..')) throw new SandboxError(`permission profile: ${kind} path '${p}' contains '..': give the path itself`);
  return normAbs(p);
}

function resolveAll(paths: unknown, kind: 'read' | 'write', fs: FsView): string[] {
  if (paths === undefined) return [];
  if (!Array.isArray(paths)) throw new SandboxError(`permission profile: file_system.${kind} must be a list of paths`);
  const out: string[] = [];
  for (const raw of paths) {
    const p = checkPath(raw, kind);
    if (kind === 'write' && p === '/') throw new SandboxError(`permission profile: write access to '/' is not a sandbox; ask for specific folders`);
    const real = fs.realpath(p);
    if (real === null) throw new SandboxError(`permission profile: ${kind} path '${p}' does not exist`);
    if (kind === 'write' && real === '/') throw new SandboxError(`permission profile: write path '${p}' resolves to '/': ask for specific folders`);
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

export function resolveProfile(profile: PermissionProfile, fs: FsView): ResolvedProfile {
  if (profile === null || typeof profile !== 'object') throw new SandboxError('permission profile must be an object');
  if (profile.network !== undefined && typeof profile.network !== 'boolean') throw new SandboxError('permission profile: network must be true or false');
  const fsp = profile.file_system ?? {};
  const write = resolveAll(fsp.write, 'write', fs);
  const read = resolveAll(fsp.read, 'read', fs);
  return { network: profile.network === true, read: read.length === 0 || read.includes('/') ? 'all' : read, write, named: read };
}
