/**
 * What `gate` runs, copied where any user can reach it: tests that run `gate` as another user (uid 65534,
 * to see a permission denied as root cannot) must not depend on where the checkout lives, and a clone in
 * a folder others cannot enter (a root home is 0700; `mktemp -d` makes the same) is out of that user's
 * reach. The copy holds bin/, dist/src/, dist/cjs-src/ and package.json (no node_modules: the commands it
 * is used for, `gate policy ...`, load no package), in a fresh world-readable temp folder.
 */
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './env.js';

export interface ReachableGate {
  /** bin/gate of the copy */
  gate: string;
  cleanup(): void;
}

export function reachableGate(): ReachableGate {
  const dir = mkdtempSync(join(tmpdir(), 'g-reach-'));
  for (const p of ['bin', join('dist', 'src'), join('dist', 'cjs-src'), 'package.json']) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
  chmodSync(dir, 0o755);
  return { gate: join(dir, 'bin', 'gate'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
