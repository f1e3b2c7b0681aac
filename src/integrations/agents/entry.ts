/**
 * The bash-named entry point: a two-line /bin/sh launcher at $GATE_HOME/bin/bash that execs gate-sh (the
 * native entry point, which knows its own node for what it hands over: an agent's environment need not
 * have node on PATH). Agents accept a shell only when
 * it is named bash (Claude Code also zsh), so this is how they run gate-sh. Pure but for isGateShEntry,
 * which reads the file it is asked about.
 */
import { readFileSync, realpathSync } from 'node:fs';
import type { Install } from './agents.js';

export const ENTRY_MARK = '# gate-sh entry point';

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function entryScript(inst: Install): string {
  return `#!/bin/sh\n${ENTRY_MARK}, named bash so agents accept it (written by 'gate setup'; 'gate setup --undo' removes it)\nexec ${sq(inst.gateSh)} "$@"\n`;
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
