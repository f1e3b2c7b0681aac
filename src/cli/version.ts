/**
 * gate-sh's version: the `version` field of the package's own package.json (one place: what `npm pack`
 * names the tarball after). Read only for --version and --help, never on the hot path.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: dist/src/cli/ and dist/cjs-src/cli/ (the bundle) are both three folders down. */
const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');

export function version(): string {
  try {
    const v = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof v === 'string' ? v : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** What `gate --version` prints. */
export function versionLine(): string {
  return `gate (gate-sh) ${version()}\n`;
}
