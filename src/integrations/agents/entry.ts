/**
 * The bash-named entry point: $GATE_HOME/bin/bash, a symlink to gate-sh (the native entry point, which
 * knows its own node for what it hands over: an agent's environment need not have node on PATH). Agents
 * accept a shell only when it is named bash (Claude Code also zsh), so this is how they run gate-sh. A
 * symlink, not a launcher script: inside a gated run the nested-shell shim looks for the real bash on PATH
 * and skips gate-sh itself (through links), but took a script launching it for a real bash, which came
 * back to the shim for ever (gemini's alias puts this folder first on PATH: every `#!/usr/bin/env bash`
 * program hung). Entries written as a script by earlier versions are still recognised,
 * and replaced by the next set-up. Pure but for isGateShEntry and isEntryLink, which read the file system.
 */
import { accessSync, constants, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Install, Probe } from './agents.js';

/** The file system as the agents' shell choice (agents.ts) sees it: executable files, PATH look-ups. */
export const fsProbe: Probe = {
  executable(p) {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  which(name, path) {
    for (const d of (path ?? '').split(delimiter)) {
      if (!d) continue;
      const p = join(d, name);
      if (fsProbe.executable(p)) return p;
    }
    return undefined;
  },
};

/** The mark of the launcher script earlier versions wrote (recognised, never written now). */
export const ENTRY_MARK = '# gate-sh entry point';

/** Whether `path` is the entry point set-up writes now: a symlink to gate-sh. */
export function isEntryLink(path: string, inst: Pick<Install, 'gateSh'>): boolean {
  try {
    return lstatSync(path).isSymbolicLink() && readlinkSync(path) === inst.gateSh;
  } catch {
    return false;
  }
}

/** Whether running `path` runs gate-sh: gate-sh itself (through symlinks), or an entry point launching it. */
export function isGateShEntry(path: string, inst: Pick<Install, 'gateSh'>): boolean {
  try {
    const real = realpathSync(path);
    if (real === realpathSync(inst.gateSh)) return true;
    const head = readFileSync(real, { encoding: 'latin1' }).slice(0, 4096);
    return head.startsWith('#!') && head.includes(ENTRY_MARK) && /exec .*gate-sh/.test(head);
  } catch {
    return false;
  }
}
