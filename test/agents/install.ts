/**
 * The real agent CLIs for the end-to-end tests, pinned, installed from npm into scratch/agents/<pkg>@<ver>
 * on first use and kept there (cached between runs). Test code; the packages are test tools, never
 * dependencies of gate-sh.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/env.js';

export const PINNED = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  codex: { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' },
} as const;

export type PinnedAgent = keyof typeof PINNED;

/**
 * Every version a test runs: the pinned one first, then the latest as of the test's writing (issue 31:
 * Claude Code 2.1.332 answered a hook denial as a "hook error"; Codex 0.171.0 was the latest in 2026-11).
 */
export const VERSIONS: Record<PinnedAgent, readonly string[]> = {
  'claude-code': ['2.1.197', '2.1.332'],
  gemini: ['0.61.0'],
  codex: ['0.169.0', '0.171.0'],
};

/** The folder holding the agent's bin (put it on PATH), installing that version (default: pinned) when missing. */
export function agentBinDir(a: PinnedAgent, version: string = PINNED[a].version): string {
  const p = { ...PINNED[a], version };
  const dir = join(ROOT, 'scratch', 'agents', `${a}@${p.version}`);
  const binDir = join(dir, 'node_modules', '.bin');
  if (!existsSync(join(binDir, p.bin))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"name":"gate-sh-agent-under-test","private":true}\n');
    process.stderr.write(`installing ${p.pkg}@${p.version} into ${dir} (end-to-end tests)...\n`);
    const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `${p.pkg}@${p.version}`], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0 || !existsSync(join(binDir, p.bin))) throw new Error(`could not install ${p.pkg}@${p.version} into ${dir}`);
  }
  return binDir;
}
