/**
 * Claude Code 2.1.197 end to end (`claude -p`), driven by a scripted Anthropic Messages server on loopback,
 * after `gate setup claude-code` in a scratch HOME with gate-sh's default config and the team rules of
 * helpers.ts (`rm` forbidden, `git status` allowed). Run by `npm run test:agents`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { breakHook, checkHookRoute, gate, HOOK_ROUTE_CHECKS, runAgent, scratch } from './helpers.js';
import { VERSIONS } from './install.js';
import { ROOT } from '../helpers/env.js';

const A = 'claude-code';

for (const version of VERSIONS[A])
  test(`claude-code ${version}, hook route: commands run through gate-sh (sandboxed, exec-gated), outputs reach the model; rm is denied as a denial`, async () => {
    const s = scratch(A, version);
    try {
      const set = gate(s, ['setup', 'claude-code', '--route', 'hook']);
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /hooks\.PreToolUse/);
      const doc = gate(s, ['doctor', '--json']);
      const claude = JSON.parse(doc.stdout).find((r: { agent: string }) => r.agent === 'claude-code');
      assert.equal(claude.routes.find((r: { route: string }) => r.route === 'hook').state, 'wired');
      // no --allowedTools: the hook's "allow" (with the command rewritten through gate-sh) lets it run
      const run = await runAgent(A, s, ['git status && echo ok', 'rm -rf somefile', ...HOOK_ROUTE_CHECKS]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.results.length, 5, JSON.stringify(run.results));
      assert.match(run.results[0].output, /On branch/);
      assert.match(run.results[0].output, /\nok$/);
      assert.equal(run.results[0].isError, false);
      // a denial, in the words of gate-sh's rule, not a failure of the hook (issue 31 point 8: 2.1.332 words
      // every hook deny "PreToolUse:Bash hook error: ..."): gate-sh refuses the rewritten command
      assert.match(run.results[1].output, /gate-sh: denied: rm -rf somefile: `rm -rf somefile` rejected: use trash instead/);
      assert.doesNotMatch(run.results[1].output, /hook error/i);
      assert.equal(run.results[1].isError, true);
      assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
      checkHookRoute(run.results.slice(2).map((r) => r.output));
    } finally {
      s.cleanup();
    }
  });

test('claude-code, hook route: a gate hook that cannot even load blocks the command (exit 2), it never lets it run', async () => {
  const s = scratch(A);
  try {
    assert.equal(gate(s, ['setup', 'claude-code', '--route', 'hook']).code, 0);
    breakHook(s, A);
    // --allowedTools Bash: Claude Code's own permission would let both run; only the hook stands in the way
    const run = await runAgent(A, s, ['rm -rf somefile', 'echo ran > marker'], ['--allowedTools', 'Bash']);
    assert.equal(run.results.length, 2, JSON.stringify(run.results) + run.stderr);
    for (const r of run.results) {
      assert.equal(r.isError, true, r.output);
      assert.match(r.output, /gate-sh: hook: .*; nothing runs/);
    }
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
    assert.equal(existsSync(join(s.work, 'marker')), false);
  } finally {
    s.cleanup();
  }
});

test('claude-code: setup is idempotent and --undo gives back the settings file byte for byte', () => {
  const s = scratch(A);
  try {
    const dir = join(s.home, '.claude');
    mkdirSync(dir);
    const original = '{\n    "model": "opus",\n    "env": {"FOO": "1"}, "hooks": {"Stop": []}\n}\n';
    writeFileSync(join(dir, 'settings.json'), original);
    // gate-sh's own config: the shell route adds Claude Code's snapshot folder to it, and undo gives it back
    const config = join(s.home, '.gate-sh', 'config.toml');
    const userConfig = '# mine\napproval_policy = "on-request"\n\n[sandbox_workspace_write]\nnetwork_access = false\n';
    writeFileSync(config, userConfig);
    assert.equal(gate(s, ['setup', 'claude-code', '--route', 'shell', '--route', 'hook']).code, 0);
    const once = readFileSync(join(dir, 'settings.json'), 'utf8');
    const again = gate(s, ['setup', 'claude-code', '--route', 'shell', '--route', 'hook']);
    assert.match(again.stdout, /nothing to change/);
    assert.equal(readFileSync(join(dir, 'settings.json'), 'utf8'), once);
    const j = JSON.parse(once);
    assert.equal(j.env.FOO, '1');
    assert.equal(j.env.CLAUDE_CODE_SHELL, join(s.home, '.gate-sh', 'bin', 'bash'));
    assert.equal(j.hooks.PreToolUse[0].matcher, 'Bash');
    const withRoot = readFileSync(config, 'utf8');
    assert.equal(withRoot.replace(/^agent_writable_roots = .* # added by gate setup\n/m, ''), userConfig, 'one line added, the rest kept');
    assert.match(withRoot, new RegExp(`^agent_writable_roots = \\["${join(dir, 'shell-snapshots')}"\\] # added by gate setup$`, 'm'));
    const got = gate(s, ['config', 'get', 'sandbox_workspace_write']);
    assert.equal(got.code, 0, got.stderr);
    assert.ok(got.stdout.includes(`"agent_writable_roots":["${join(dir, 'shell-snapshots')}"]`), got.stdout);
    const undo = gate(s, ['setup', '--undo', 'claude-code']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(readFileSync(join(dir, 'settings.json'), 'utf8'), original);
    assert.equal(readFileSync(config, 'utf8'), userConfig);
    assert.equal(existsSync(join(s.home, '.gate-sh', 'bin', 'bash')), false);
    // changed since set-up: only gate-sh's own keys go
    assert.equal(gate(s, ['setup', 'claude-code']).code, 0);
    const edited = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'));
    edited.model = 'sonnet';
    writeFileSync(join(dir, 'settings.json'), JSON.stringify(edited));
    assert.equal(gate(s, ['setup', '--undo', 'claude-code']).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')), { model: 'sonnet', env: { FOO: '1' }, hooks: { Stop: [] } });
  } finally {
    s.cleanup();
  }
});

test('claude-code: doctor warns loudly when Claude Code would silently ignore gate-sh, and the real Claude Code does ignore it', async () => {
  const s = scratch(A);
  try {
    assert.equal(gate(s, ['setup', 'claude-code']).code, 0);
    // what the README used to say: gate-sh itself (executable, working), at a path without 'bash' in it,
    // which Claude Code drops without a word
    const file = join(s.home, '.claude', 'settings.json');
    const j = JSON.parse(readFileSync(file, 'utf8'));
    j.env.CLAUDE_CODE_SHELL = join(ROOT, 'bin', 'gate-sh');
    assert.doesNotMatch(j.env.CLAUDE_CODE_SHELL, /bash|zsh/);
    writeFileSync(file, JSON.stringify(j));
    const doc = gate(s, ['doctor']);
    assert.equal(doc.code, 1);
    assert.match(doc.stdout, /WARNING: Claude Code IGNORES gate-sh: CLAUDE_CODE_SHELL=.* is ignored: .*contains 'bash' or 'zsh'.* NOT gated/);
    // the doctor's rule is Claude Code's: the real agent runs another shell (gate-sh sets GATE_RUN, bash does not)
    const run = await runAgent(A, s, ['echo "gated=${GATE_RUN:+yes}"'], ['--allowedTools', 'Bash']);
    assert.equal(run.results.length, 1, JSON.stringify(run.results) + run.stderr);
    assert.equal(run.results[0].output, 'gated=');
  } finally {
    s.cleanup();
  }
});
