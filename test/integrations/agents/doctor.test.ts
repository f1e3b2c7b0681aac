/**
 * gate doctor and the agents section of gate status: an agent set up by gate setup shows as gated; the
 * silent fallback (an override Claude Code drops because its path lacks "bash") is a loud warning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** A fake agent program named `name` in a folder of its own (doctor looks for the agent on PATH only). */
function fakeAgent(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return dir;
}

test('doctor: an agent on PATH never set up is NOT gated, a WARNING with what to run, and exit 1 (issue 32 point 7)', async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const bin = fakeAgent(join(te.dir, 'agents'), 'gemini');
    const env = { ...te.env, PATH: `${bin}:${te.env.PATH}` };
    const r = await runGate(env, ['doctor']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /^gemini-cli \(.*\/agents\/gemini\): NOT gated by gate-sh\n/);
    assert.match(r.stdout, /\n {2}hook {2}not-wired no gate-sh hook in .*settings\.json \(gate setup gemini --route hook adds it\)\n/);
    assert.match(r.stdout, /\n {2}WARNING: gemini-cli is on PATH \(.*\) and its commands are NOT gated: run gate setup gemini\n/);
    // set up: gated, exit 0, and the hook route says how it gates
    assert.equal((await runGate(env, ['setup', 'gemini', '--route', 'hook'])).code, 0);
    const ok = await runGate(env, ['doctor']);
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(ok.stdout, /hook {2}wired +the hook runs .* for run_shell_command; it rewrites each command to run through gate-sh \(BeforeTool hookSpecificOutput\.tool_input\)/);
  } finally {
    te.cleanup();
  }
});

test('doctor: gemini set up for the shell route is judged as README.md starts it (the alias PATH), not as a false alarm (issue 31 point 7)', async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const bin = fakeAgent(join(te.dir, 'agents'), 'gemini');
    const env = { ...te.env, PATH: `${bin}:${te.env.PATH}` };
    assert.equal((await runGate(env, ['setup', 'gemini', '--route', 'shell'])).code, 0);
    const r = await runGate(env, ['doctor']);
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /^gemini-cli .*: gated by gate-sh\n/);
    const dir = join(te.env.GATE_HOME, 'bin');
    assert.ok(
      r.stdout.includes(`shell wired     when started as README.md says (PATH=${dir}:$PATH gemini) it runs ${join(dir, 'bash')} → gate-sh`),
      r.stdout,
    );
    assert.ok(r.stdout.includes(`alias gemini='PATH=${dir}:$PATH gemini'`), r.stdout);
    assert.doesNotMatch(r.stdout, /WARNING/);
    // started with the alias already: wired on this PATH
    const withAlias = await runGate({ ...env, PATH: `${dir}:${env.PATH}` }, ['doctor']);
    assert.match(withAlias.stdout, /shell wired +gemini-cli runs 'bash' found on PATH: .*→ gate-sh/);
    // the entry point gone: not gated any more, said loudly
    rmSync(join(dir, 'bash'));
    const gone = await runGate(env, ['doctor']);
    assert.equal(gone.code, 1, gone.stdout);
    assert.match(gone.stdout, /WARNING: gemini-cli was set up \(shell\) but would NOT use gate-sh now/);
  } finally {
    te.cleanup();
  }
});

test('setup --undo leaves no empty ~/.claude or ~/.gemini behind (set-up made them), and keeps one the agent wrote into', async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    for (const [agent, dir] of [
      ['claude-code', '.claude'],
      ['gemini', '.gemini'],
    ]) {
      const home = join(te.env.HOME, dir);
      assert.equal(existsSync(home), false);
      assert.equal((await runGate(te.env, ['setup', agent, '--route', 'hook'])).code, 0);
      assert.equal(existsSync(join(home, 'settings.json')), true);
      const undo = await runGate(te.env, ['setup', '--undo', agent]);
      assert.equal(undo.code, 0, undo.stderr);
      assert.equal(existsSync(home), false, `${home} left behind: ${undo.stdout}`);
      // the agent wrote its own files there since: the folder stays
      assert.equal((await runGate(te.env, ['setup', agent, '--route', 'hook'])).code, 0);
      writeFileSync(join(home, 'history'), 'mine\n');
      assert.equal((await runGate(te.env, ['setup', '--undo', agent])).code, 0);
      assert.equal(readFileSync(join(home, 'history'), 'utf8'), 'mine\n');
      rmSync(home, { recursive: true });
    }
  } finally {
    te.cleanup();
  }
});
