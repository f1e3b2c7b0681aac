/**
 * The real bash, by absolute path. Never from PATH (the nested-shell shims put a `bash` first on PATH) and
 * never from the caller's environment (a caller must not choose what runs a checked script).
 */
import { accessSync, constants } from 'node:fs';

export const BASH_CANDIDATES = ['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash'] as const;

export function findBash(): string {
  for (const p of BASH_CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // try the next one
    }
  }
  throw new Error(`no bash found (looked at ${BASH_CANDIDATES.join(', ')}); install bash`);
}
