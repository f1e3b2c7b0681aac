/**
 * `gate setup` beyond the three agents' files (issue 14, point 1): `gate setup shell` prints what any other
 * agent needs and writes nothing, and its own recipe (a symlink named bash) really runs gate-sh; Codex,
 * which cannot be wired as a shell without root, is told so and given the route that works; usage errors.
 * Real `gate` processes and a real daemon in a temp environment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

test('the entry point set-up writes, first on PATH (gemini\'s alias), inside a gated run: `#!/usr/bin/env bash` programs and nested bash run as with bash, rm stays denied (issue 31 point 4)', async () => {
  const d = await startDaemon({ rules: 'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")\n', workspace: 'ws' });
  try {
    const entry = join(d.env.GATE_HOME, 'bin', 'bash');
    // an entry point an earlier version wrote (a launcher script) is replaced by the symlink
    mkdirSync(join(d.env.GATE_HOME, 'bin'), { recursive: true });
    writeFileSync(entry, `#!/bin/sh\n# gate-sh entry point, named bash so agents accept it\nexec ${join(ROOT, 'bin', 'gate-sh')} "$@"\n`, { mode: 0o755 });
    assert.equal((await runGate(d.env, ['setup', 'gemini', '--route', 'shell'])).code, 0);
    assert.equal(lstatSync(entry).isSymbolicLink(), true);
    assert.equal(readlinkSync(entry), join(ROOT, 'bin', 'gate-sh'));
    // a pyenv-style shim: a bash script found by `env`, as python3 is on many machines
    writeFileSync(join(d.ws, 'tool'), '#!/usr/bin/env bash\necho "tool ran $1"\n', { mode: 0o755 });
    writeFileSync(join(d.ws, 'victim'), 'x\n');
    // the same kind of script running an rm no pre-flight sees: the exec gate still denies it
    writeFileSync(join(d.ws, 'clean'), '#!/usr/bin/env bash\nrm -f victim\n', { mode: 0o755 });
    const env = { ...d.env, PATH: `${dirname(entry)}:${d.env.PATH}` };
    // bounded: before, the nested-shell shim took the launcher script for the real bash and came back to itself for ever
    const run = spawnSync('bash', ['-c', './tool one; bash -c "echo nested \\${GATE_RUN:+gated}"; ./clean; echo "rm: $?"'], {
      env,
      cwd: d.ws,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.signal, null, `ended by itself: ${run.stderr}`);
    assert.equal(run.stdout, 'tool ran one\nnested gated\nrm: 126\n', run.stderr);
    assert.match(run.stderr, /gate-sh: denied: rm -f victim: .*use trash instead/);
    assert.equal(existsSync(join(d.ws, 'victim')), true);
    assert.equal((await runGate(d.env, ['setup', '--undo', 'gemini'])).code, 0);
    assert.equal(lstatSync(entry).isSymbolicLink(), true, 'kept: it was there before this set-up');
    // one set-up creates it, its undo removes it
    rmSync(entry);
    assert.equal((await runGate(d.env, ['setup', 'gemini'])).code, 0);
    assert.equal(readlinkSync(entry), join(ROOT, 'bin', 'gate-sh'));
    assert.equal((await runGate(d.env, ['setup', '--undo', 'gemini'])).code, 0);
    assert.equal(lstatSync(entry, { throwIfNoEntry: false }), undefined, 'undo removes the symlink');
  } finally {
    await d.close();
  }
});
