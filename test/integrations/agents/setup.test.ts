/**
 * `gate setup` beyond the three agents' files (issue 14, point 1): `gate setup shell` prints what any other
 * agent needs and writes nothing, and its own recipe (a symlink named bash) really runs gate-sh; Codex,
 * which cannot be wired as a shell without root, is told so and given the route that works; usage errors.
 * Real `gate` processes and a real daemon in a temp environment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runGate } from '../../daemon/helpers.js';
import { startDaemon } from '../../helpers/daemon.js';
import { ROOT, tempEnv } from '../../helpers/env.js';

test('gate setup shell: writes nothing, says what any agent needs; its symlink recipe runs gate-sh', async () => {
  const d = await startDaemon({ env: { GATE_SANDBOX_MODE: 'danger-full-access' } });
  try {
    const before = readdirSync(d.env.GATE_HOME).sort();
    const r = await runGate(d.env, ['setup', 'shell']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(d.env.GATE_HOME).sort(), before, 'nothing written');
    assert.ok(!existsSync(join(d.env.HOME, '.claude')) && !existsSync(join(d.env.HOME, '.gemini')) && !existsSync(d.env.CODEX_HOME));
    const entry = join(d.env.GATE_HOME, 'bin', 'bash');
    assert.ok(r.stdout.includes(`${entry}   (a launcher: exec ${join(ROOT, 'bin', 'gate-sh')} "$@")`), r.stdout);
    assert.ok(r.stdout.includes(`PATH=${join(d.env.GATE_HOME, 'bin')}:$PATH`), r.stdout);
    assert.ok(r.stdout.includes(`args ["${join(ROOT, 'bin', 'gate')}", "mcp"]`), r.stdout);
    assert.match(r.stdout, /login shell: that needs root/);
    assert.match(r.stdout, /echo \$GATE_RUN/);
    // the recipe it prints: ln -s <install>/bin/gate-sh ~/bin/bash; an agent running that bash runs gate-sh
    const ln = /ln -s (\S+) ~\/bin\/bash/.exec(r.stdout);
    assert.ok(ln, r.stdout);
    mkdirSync(join(d.env.HOME, 'bin'));
    symlinkSync(ln[1], join(d.env.HOME, 'bin', 'bash'));
    const viaLink = spawnSync(join(d.env.HOME, 'bin', 'bash'), ['-c', 'echo "gated=${GATE_RUN:+yes}"'], { env: d.env, encoding: 'utf8' });
    assert.equal(viaLink.stdout, 'gated=yes\n', viaLink.stderr);
    const viaPath = spawnSync('/bin/sh', ['-c', 'bash -c \'echo "gated=${GATE_RUN:+yes}"\''], {
      env: { ...d.env, PATH: `${join(d.env.HOME, 'bin')}:${d.env.PATH}` },
      encoding: 'utf8',
    });
    assert.equal(viaPath.stdout, 'gated=yes\n', viaPath.stderr);
    // plain bash leaves GATE_RUN unset: the check it prints tells the two apart
    const plain = spawnSync('/bin/bash', ['-c', 'echo "gated=${GATE_RUN:+yes}"'], { env: d.env, encoding: 'utf8' });
    assert.equal(plain.stdout, 'gated=\n');
  } finally {
    await d.close();
  }
});

test('gate setup codex says that its shell needs root and gives the MCP route; a shell route for Codex is refused', async () => {
  const d = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const r = await runGate(d.env, ['setup', 'codex']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^created \S+\/config\.toml: \[mcp_servers\.gate\] runs gate mcp/m);
    assert.match(r.stdout, /^note: Codex runs its built-in shell with your login shell \(changing that needs root\); .*over MCP instead/m);
    const shell = await runGate(d.env, ['setup', 'codex', '--route', 'shell']);
    assert.equal(shell.code, 1);
    assert.equal(shell.stderr, "gate: setup: Codex CLI has no 'shell' route (it has: mcp)\n");
    assert.equal((await runGate(d.env, ['setup', '--undo', 'codex'])).code, 0);
    assert.equal(existsSync(join(d.env.CODEX_HOME, 'config.toml')), false);
    // undo of what was never set up changes nothing; an unknown agent is a usage error
    const none = await runGate(d.env, ['setup', '--undo', 'gemini']);
    assert.equal(none.code, 0);
    assert.match(none.stdout, /^gemini-cli was not set up by gate setup .*; nothing changed\n$/);
    const unknown = await runGate(d.env, ['setup', 'aider']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^gate: setup: unknown agent 'aider' \(known: claude-code, gemini, codex, or 'shell' for any other\)\n$/);
  } finally {
    d.cleanup();
  }
});
