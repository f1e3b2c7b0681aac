/** `host_executable(name, paths)` validation and the basename rules of §1.6. */
import { homedir } from 'node:os';

export class HostExecutableError extends Error {}

/** Rust `Path::file_name` on Unix: the last normal component; undefined for `/`, `..`-terminated or empty. */
export function fileName(path: string): string | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  const last = parts[parts.length - 1];
  if (last === undefined || last === '..') return undefined;
  // a leading "./" is kept by Rust but only matters when it is the whole path
  if (parts.length === 0) return undefined;
  return last;
}

export function validateName(name: string): string {
  if (name === '') throw new HostExecutableError('invalid rule: host_executable name cannot be empty');
  if (name.includes('/') || name === '.' || name === '..') {
    throw new HostExecutableError(`invalid rule: host_executable name must be a bare executable name (got ${name})`);
  }
  return name;
}

/** Validate one path; `~/x` expands to the user's home (newest Codex). Returns the path as stored. */
export function validatePath(name: string, raw: string, home: string = homedir()): string {
  let path = raw;
  if (raw.startsWith('~/')) path = home.replace(/\/+$/, '') + raw.slice(1);
  if (!path.startsWith('/')) {
    throw new HostExecutableError(`invalid rule: host_executable paths must be absolute or use \`~/...\` home-relative syntax (got ${raw})`);
  }
  if (fileName(path) !== name) throw new HostExecutableError(`invalid rule: host_executable path \`${raw}\` must have basename \`${name}\``);
  return path;
}
