/**
 * The README's agent section, run as written: every `./bin/gate ...` line of its shell blocks, in order, in
 * a scratch HOME, and the state each block leaves is the one its text describes. The lines that start the
 * agents (`claude --allowedTools Bash`, `codex`, `PATH=~/.gate-sh/bin:$PATH gemini`) are run as written by
 * `npm run test:agents` (test/agents/helpers.ts, readmeAgentLine).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempEnv } from '../../helpers/env.js';

function agentSection(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## With an agent');
  assert.ok(start >= 0, 'README has a "With an agent" section');
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

/** The `./bin/gate` lines of each ```sh block, comments cut. */
function gateLines(section: string): string[][] {
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l.startsWith('./bin/gate ')),
  );
}

test('README agent section: its gate commands run as written and do what the text says', () => {
  const blocks = gateLines(agentSection());
  assert.equal(blocks.length, 4); // overview, Claude Code, Codex, gemini-cli
  for (const lines of blocks) {
    const te = tempEnv();
    delete te.env.GATE_HOME;
    delete te.env.CODEX_HOME;
    try {
      for (const line of lines) {
        const r = spawnSync('/bin/sh', ['-c', line], { cwd: ROOT, env: te.env, encoding: 'utf8' });
        // doctor exits 1 when an agent would not use gate-sh: that is a finding, not a failure of the line
        assert.ok(r.status === 0 || (line.includes(' doctor') && r.status === 1), `${line}: exit ${r.status}\n${r.stdout}${r.stderr}`);
      }
      const home = te.env.HOME;
      const claude = join(home, '.claude', 'settings.json');
      if (lines.some((l) => l.includes('--undo claude-code'))) assert.equal(existsSync(claude), false);
      else if (lines.some((l) => l.includes('--route hook'))) {
        const j = JSON.parse(readFileSync(claude, 'utf8'));
        assert.equal(j.hooks.PreToolUse[0].matcher, 'Bash');
        assert.equal(j.env, undefined); // the route switched: the shell route's key is gone
      }
      if (lines.some((l) => l.includes('setup codex'))) assert.match(readFileSync(join(home, '.codex', 'config.toml'), 'utf8'), /\[mcp_servers\.gate\]/);
      if (lines.some((l) => l.includes('setup gemini'))) {
        assert.equal(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).hooks.BeforeTool[0].matcher, 'run_shell_command');
        assert.equal(existsSync(join(home, '.gate-sh', 'bin', 'bash')), true);
      }
    } finally {
      te.cleanup();
    }
  }
});
