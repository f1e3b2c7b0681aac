/**
 * The SandboxContext the argv tests build on: a run in /ws whose session's runtime folder is /rt/gate-sh
 * (request folder, the run's client folder r-1), over a fake file system of `files`. Pure, test-only.
 */
import { fakeFs } from '../../../src/sandbox/fs-view.js';
import type { SandboxContext } from '../../../src/sandbox/bwrap-argv.js';

export const RUNTIME_FILES = {
  '/rt/gate-sh/default/req': 'dir',
  '/rt/gate-sh/default/req/c': 'dir',
  '/rt/gate-sh/default/req/c/r-1': 'dir',
} as const;

export function runContext(files: Parameters<typeof fakeFs>[0], over: Partial<SandboxContext> = {}): SandboxContext {
  return {
    cwd: '/ws',
    env: {},
    runtimeRequestDir: '/rt/gate-sh/default/req',
    runtimeClientDir: '/rt/gate-sh/default/req/c/r-1',
    hiddenPaths: ['/rt/gate-sh'],
    protectedExtra: [],
    fs: fakeFs({ ...RUNTIME_FILES, ...files }),
    ...over,
  };
}
