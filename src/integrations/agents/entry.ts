/**
 * The bash-named entry point: a two-line /bin/sh launcher at $GATE_HOME/bin/bash that execs gate-sh (the
 * native entry point, which knows its own node for what it hands over: an agent's environment need not
 * have node on PATH). Agents accept a shell only when
 * it is named bash (Claude Code also zsh), so this is how they run gate-sh. Pure but for isGateShEntry,
 * which reads the file it is asked about.
 */
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Install, Probe } from './agents.js';
import { shellWord } from '../../protocol/shell-words.js';

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

export const ENTRY_MARK = '# gate-sh entry point';

export function entryScript(inst: Install): string {
  return `#!/bin/sh\n${ENTRY_MARK}, named bash so agents accept it (written by 'gate setup'; 'gate setup --undo' removes it)\nexec ${shellWord(inst.gateSh)} "$@"\n`;
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
