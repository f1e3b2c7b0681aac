/**
 * Where skills live by default: Codex's and Claude Code's layouts, user-wide and per project, and
 * gate-sh's own. Pure: from the environment and the working folder.
 */
import { posix } from 'node:path';
import { homedir } from 'node:os';
import { codexHome, type Env, gateHome } from '../paths/index.js';

export function defaultSkillRoots(env: Env, cwd: string): string[] {
  const home = env.HOME || homedir();
  return [
    posix.join(codexHome(env), 'skills'),
    posix.join(cwd, '.codex', 'skills'),
    posix.join(home, '.claude', 'skills'),
    posix.join(cwd, '.claude', 'skills'),
    posix.join(gateHome(env, { read: true }), 'skills'),
  ].filter((r, i, all) => all.indexOf(r) === i);
}
