/**
 * gate doctor and the agents section of gate status: an agent set up by gate setup shows as gated; the
 * silent fallback (an override Claude Code drops because its path lacks "bash") is a loud warning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGate } from '../../daemon/helpers.js';
import { tempEnv } from '../../helpers/env.js';

test('doctor and status: wired shows gated; a CLAUDE_CODE_SHELL Claude Code would ignore is a WARNING and exit 1', async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    assert.equal((await runGate(te.env, ['setup', 'claude-code'])).code, 0);
    const ok = await runGate(te.env, ['doctor']);
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(ok.stdout, /^Claude Code \(not on PATH\): gated by gate-sh\n {2}shell wired /);
    const st = await runGate(te.env, ['status']); // no daemon: exit 3, the agents still shown
    assert.equal(st.code, 3);
    assert.match(st.stderr, /agents \(details: gate doctor\):\n {2}Claude Code: gated \(shell\)\n/);
    const file = join(te.env.HOME, '.claude', 'settings.json');
    const j = JSON.parse(readFileSync(file, 'utf8'));
    j.env.CLAUDE_CODE_SHELL = join(te.env.GATE_HOME, 'bin', 'gate-sh-launcher');
    writeFileSync(file, JSON.stringify(j));
    const bad = await runGate(te.env, ['doctor', '--json']);
    assert.equal(bad.code, 1);
    const r = JSON.parse(bad.stdout)[0];
    assert.equal(r.gated, false);
    assert.match(r.warnings[0], /Claude Code IGNORES gate-sh: CLAUDE_CODE_SHELL=.*gate-sh-launcher .* is ignored/);
    assert.match((await runGate(te.env, ['status'])).stderr, /Claude Code: NOT gated\n {4}WARNING: Claude Code IGNORES gate-sh/);
  } finally {
    te.cleanup();
  }
});

test('doctor, Codex: the MCP route is wired only with the built-in shell tool off; turned back on, a WARNING and exit 1', async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    assert.equal((await runGate(te.env, ['setup', 'codex'])).code, 0);
    const ok = await runGate(te.env, ['doctor', '--json']);
    assert.equal(ok.code, 0, ok.stdout);
    const codex = JSON.parse(ok.stdout).find((r: { agent: string }) => r.agent === 'codex');
    assert.equal(codex.gated, true);
    assert.deepEqual(
      codex.routes.map((r: { route: string; state: string }) => [r.route, r.state]),
      [
        ['shell', 'not-wired'],
        ['mcp', 'wired'],
      ],
    );
    assert.match(codex.routes[0].detail, /changing the login shell needs root; use the MCP route/);
    const file = join(te.env.CODEX_HOME, 'config.toml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^shell_tool = false .*$/m, 'shell_tool = true'));
    const bad = await runGate(te.env, ['doctor']);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /^Codex CLI \(not on PATH\): NOT gated by gate-sh\n/);
    assert.match(bad.stdout, /\n {2}mcp {3}broken .*the built-in shell tool is ON: Codex may run commands without gate-sh\n/);
    assert.match(bad.stdout, /\n {2}WARNING: Codex can run commands WITHOUT gate-sh/);
  } finally {
    te.cleanup();
  }
});
