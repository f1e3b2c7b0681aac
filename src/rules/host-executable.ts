/** `host_executable(name, paths)` validation and the path arithmetic of §1.6 (pure: no file system access). */

import { PolicyError } from './error.js';

/**
 * Lexical normalisation of an absolute path, as Codex's AbsolutePathBuf does: empty and `.` components
 * dropped, `..` pops a component (never above `/`). No symlinks are followed.
 */
export function normalizeAbsolute(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return '/' + out.join('/');
}

/** The last component of a normalised absolute path; undefined for `/`. */
export function baseName(normalized: string): string | undefined {
  const k = normalized.lastIndexOf('/');
  const name = normalized.slice(k + 1);
  return name === '' ? undefined : name;
}

export interface PathContext {
  /** absolute working directory that relative spellings resolve against */
  cwd?: string;
  /** home folder for `~/...` */
  home?: string;
}

/**
 * The absolute, normalised program a first token names, or undefined when it does not name a path:
 * absolute tokens always; `~/x` and relative tokens containing `/` only when the context allows it.
 */
export function programPath(token: string, ctx: PathContext): string | undefined {
  if (token.startsWith('/')) return normalizeAbsolute(token);
  if (token.startsWith('~/') && ctx.home) return normalizeAbsolute(`${ctx.home}/${token.slice(2)}`);
  if (token.includes('/') && ctx.cwd) return normalizeAbsolute(`${ctx.cwd}/${token}`);
  return undefined;
}

export function validateName(name: string): string {
  if (name === '') throw new PolicyError('invalid rule: host_executable name cannot be empty');
  if (name.includes('/') || name === '.' || name === '..') {
    throw new PolicyError(`invalid rule: host_executable name must be a bare executable name (got ${name})`);
  }
  return name;
}

/** Validate one path; `~/x` expands to `home` (newest Codex). Returns the normalised path. */
export function validatePath(name: string, raw: string, home: string | undefined): string {
  let path = raw;
  if (raw.startsWith('~/') && home) path = `${home}/${raw.slice(2)}`;
  if (!path.startsWith('/')) {
    throw new PolicyError(`invalid rule: host_executable paths must be absolute or use \`~/...\` home-relative syntax (got ${raw})`);
  }
  const normalized = normalizeAbsolute(path);
  if (baseName(normalized) !== name) throw new PolicyError(`invalid rule: host_executable path \`${raw}\` must have basename \`${name}\``);
  return normalized;
}
