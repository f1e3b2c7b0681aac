/** Reversible settings edits (JSON and TOML) and the agents' own shell-selection rules. Pure. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits, undoEdits } from '../../../../src/integrations/agents/json-edit.js';
import { removeTomlEdits, setTomlKey } from '../../../../src/integrations/agents/toml-edit.js';
import { claudeShell, codexShell, geminiShell, type Probe } from '../../../../src/integrations/agents/agents.js';

test('json edits: set and add, idempotent, undone exactly; a value changed since is kept', () => {
  const orig = { env: { A: '1' }, hooks: { Stop: [] } };
  const edits = [
    { op: 'set' as const, path: ['env', 'X'], value: '/g/bin/bash' },
    { op: 'add' as const, path: ['hooks', 'PreToolUse'], item: { matcher: 'Bash' } },
    { op: 'set' as const, path: ['new', 'deep', 'k'], value: true },
  ];
  const one = applyEdits(orig, edits);
  assert.equal(one.changed, true);
  const two = applyEdits(one.root, edits, one.applied);
  assert.equal(two.changed, false);
  assert.deepEqual(two.applied, one.applied);
  assert.deepEqual(undoEdits(two.root, two.applied).root, orig);
  const changed = structuredClone(two.root) as any;
  changed.env.X = '/bin/zsh';
  const u = undoEdits(changed, two.applied);
  assert.equal((u.root as any).env.X, '/bin/zsh');
  assert.equal(u.kept.length, 1);
  // an existing value is put back, not deleted
  const withOld = applyEdits({ env: { X: '/old' } }, [edits[0]]);
  assert.deepEqual(undoEdits(withOld.root, withOld.applied).root, { env: { X: '/old' } });
  assert.throws(() => applyEdits({ env: 'str' }, [edits[0]]), /'env' is not an object/);
});

test('toml edits keep comments, replace an existing key reversibly, add a missing table', () => {
  const orig = '# mine\nmodel = "o3"\n\n[features]\nshell_tool = true # why\n\n[mcp_servers.other]\ncommand = "x"\n';
  let t = setTomlKey(orig, 'features', 'shell_tool', 'false');
  t = setTomlKey(t, 'mcp_servers.gate', 'command', '"node"');
  assert.equal(setTomlKey(t, 'features', 'shell_tool', 'false'), t);
  assert.match(t, /# replaced by gate setup: shell_tool = true # why\nshell_tool = false # added by gate setup/);
  assert.match(t, /\n# added by gate setup\n\[mcp_servers\.gate\] # added by gate setup\ncommand = "node" # added by gate setup\n$/);
  assert.equal(removeTomlEdits(t), orig);
  assert.equal(removeTomlEdits(setTomlKey('', 'features', 'x', '1')), '');
});

test("Claude Code's shell rule: an override without bash/zsh in its path is silently dropped", () => {
  const p: Probe = { executable: (s) => s !== '/missing/bash', which: (n) => `/usr/bin/${n}` };
  assert.equal(claudeShell({ SHELL: '/bin/bash' }, { CLAUDE_CODE_SHELL: '/g/bin/bash' }, p).shell, '/g/bin/bash');
  const dropped = claudeShell({ SHELL: '/bin/bash' }, { CLAUDE_CODE_SHELL: '/g/bin/gate-sh' }, p);
  assert.equal(dropped.shell, '/bin/bash');
  assert.match(dropped.ignored ?? '', /contains 'bash' or 'zsh'/);
  // settings.json env wins over the environment; a missing file is not executable
  assert.equal(claudeShell({ CLAUDE_CODE_SHELL: '/x/zsh', SHELL: '/bin/sh' }, {}, p).shell, '/x/zsh');
  assert.equal(claudeShell({ CLAUDE_CODE_SHELL: '/missing/bash', SHELL: '/bin/sh' }, {}, p).shell, '/usr/bin/zsh');
});

test("gemini-cli's and Codex's shell rules: bash first on PATH; the login shell only when named bash, zsh or sh", () => {
  const p: Probe = { executable: () => true, which: (n, path) => (path ?? '').split(':').filter(Boolean).map((d) => `${d}/${n}`)[0] };
  assert.equal(geminiShell({ PATH: '/g/bin:/usr/bin' }, p).shell, '/g/bin/bash');
  assert.equal(geminiShell({ PATH: '' }, p).shell, '');
  assert.equal(codexShell('/usr/bin/zsh').shell, '/usr/bin/zsh');
  assert.equal(codexShell('/home/u/.gate-sh/bin/bash').shell, '/home/u/.gate-sh/bin/bash');
  // gate-sh under its own name is not taken: Codex falls back to its default
  assert.equal(codexShell('/opt/gate/bin/gate-sh').shell, '/bin/bash');
  assert.match(codexShell('/usr/bin/fish').why, /not bash\/zsh\/sh: Codex falls back/);
});
