/**
 * Codex CLI end to end (`codex exec`), the pinned 0.169.0 and the latest 0.171.0 (install.ts VERSIONS),
 * driven by a scripted OpenAI Responses streaming server on
 * loopback, after `gate setup codex` (the MCP route: Codex's login shell cannot change without root) in a
 * scratch HOME with gate-sh's default config and the team rules of helpers.ts. Run by `npm run test:agents`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { audit, codexMcpResult, gate, PLUMBING, runAgent, scratch } from './helpers.js';
import { VERSIONS } from './install.js';

const A = 'codex';

for (const version of VERSIONS[A])
  test(`codex ${version}, MCP route: allowed runs and reaches the model, rm denied with its reason, plumbing byte-exact, nothing else asked`, async () => {
    const s = scratch(A, version);
    try {
      const set = gate(s, ['setup', 'codex']);
      assert.equal(set.code, 0, set.stderr);
      const doc = JSON.parse(gate(s, ['doctor', '--json']).stdout).find((r: { agent: string }) => r.agent === 'codex');
      assert.equal(doc.routes.find((r: { route: string }) => r.route === 'mcp').state, 'wired', JSON.stringify(doc));
      // an rm no pre-flight can see: make runs it (denied at exec time, the justification must still reach the model)
      writeFileSync(join(s.work, 'Makefile'), 'clean:\n\trm -rf somefile\n');
      // started as README.md says (codex; exec and the fake model's provider after it)
      const commands = ['git status && echo ok', 'rm -rf somefile', PLUMBING, 'echo "gated=${GATE_RUN:+yes} rt=${XDG_RUNTIME_DIR}"', 'make clean'];
      // (Codex's own sandbox holds through gate mcp: `codex exec` asks read-only unless told otherwise)
      const run = await runAgent(A, s, commands, ['--sandbox', 'workspace-write'], undefined, true);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.results.length, 5, JSON.stringify(run.results) + run.stderr);
      const [ok, rm, plumbing, where, make] = run.results.map((r) => codexMcpResult(r.output));
      assert.match(make.output, /gate-sh: denied: rm -rf somefile: Execution forbidden by policy: use trash instead \(rule .*team\.rules:1\)/);
      assert.notEqual(make.exit_code, 0);
      assert.equal(ok.exit_code, 0);
      assert.match(ok.output, /^On branch[\s\S]*\nok\n$/);
      assert.equal(rm.exit_code, 126);
      assert.match(rm.output, /use trash instead/);
      assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
      const bash = spawnSync('/bin/bash', ['-c', PLUMBING], { cwd: s.work, encoding: 'utf8' });
      assert.equal(plumbing.output, bash.stdout + bash.stderr);
      // gate-sh ran it, and found the same daemon as the user's shell (XDG_RUNTIME_DIR forwarded to gate mcp)
      assert.equal(where.output, `gated=yes rt=${s.env.XDG_RUNTIME_DIR}\n`);
      const notAllowed = audit(s).filter((r) => r.kind === 'decision' && r.decision !== 'allow');
      assert.ok(notAllowed.length > 0 && notAllowed.every((r) => r.argv[0] === 'rm'), JSON.stringify(notAllowed, null, 1));
    } finally {
      s.cleanup();
    }
  });

for (const version of VERSIONS[A])
  test(`codex ${version}, MCP route: Codex's own sandbox holds (issue 31 point 6): --sandbox read-only writes nothing; an env var set for codex reaches the command`, async () => {
    const s = scratch(A, version);
    try {
      assert.equal(gate(s, ['setup', 'codex']).code, 0);
      // set for codex only (not in gate mcp's short environment: Codex starts MCP servers without it)
      s.env.MY_PROJECT_TOKEN_DIR = '/opt/project/tokens';
      const commands = ['echo written > made-by-model; echo "status $?"', 'echo "dir=${MY_PROJECT_TOKEN_DIR:-UNSET}"'];
      const ro = await runAgent(A, s, commands, ['--sandbox', 'read-only'], undefined, true);
      assert.equal(ro.code, 0, ro.stderr);
      const [write, env] = ro.results.map((r) => codexMcpResult(r.output));
      assert.match(write.output, /Read-only file system[\s\S]*status 1/);
      assert.equal(existsSync(join(s.work, 'made-by-model')), false, 'codex exec --sandbox read-only: nothing written');
      assert.equal(env.output, 'dir=/opt/project/tokens\n');
      // the daemon's record: Codex's read-only held for its own calls
      const narrowed = audit(s).filter((r) => r.kind === 'config' && /^host sandbox /.test(r.detail));
      assert.match(
        narrowed[0]?.detail ?? '',
        /^host sandbox gate mcp \(pid \d+\) \(codex-mcp-client asked for its sandbox: read-only\): its calls run in \{"type":"read-only"\}/,
      );
      // workspace-write (gate-sh's own): the same write succeeds
      const ws = await runAgent(A, s, commands.slice(0, 1), ['--sandbox', 'workspace-write'], undefined, true);
      assert.equal(codexMcpResult(ws.results[0].output).output, 'status 0\n');
      assert.equal(readFileSync(join(s.work, 'made-by-model'), 'utf8'), 'written\n');
    } finally {
      s.cleanup();
    }
  });

test('codex: setup keeps the user config.toml, is idempotent, and --undo gives it back byte for byte', () => {
  const s = scratch(A);
  try {
    const dir = join(s.home, '.codex');
    mkdirSync(dir);
    const original = '# my settings\nmodel = "o3"\n\n[features]\nshell_tool = true # keep\n';
    writeFileSync(join(dir, 'config.toml'), original);
    assert.equal(gate(s, ['setup', 'codex']).code, 0);
    const once = readFileSync(join(dir, 'config.toml'), 'utf8');
    assert.match(once, /^# my settings\nmodel = "o3"\n/);
    assert.match(gate(s, ['setup', 'codex']).stdout, /nothing to change/);
    assert.equal(readFileSync(join(dir, 'config.toml'), 'utf8'), once);
    assert.equal(gate(s, ['setup', '--undo', 'codex']).code, 0);
    assert.equal(readFileSync(join(dir, 'config.toml'), 'utf8'), original);
    // edited since: only gate-sh's lines go
    assert.equal(gate(s, ['setup', 'codex']).code, 0);
    writeFileSync(join(dir, 'config.toml'), readFileSync(join(dir, 'config.toml'), 'utf8') + 'approval_policy = "never"\n'.replace(/^/, '\n[x]\n'));
    assert.equal(gate(s, ['setup', '--undo', 'codex']).code, 0);
    assert.equal(readFileSync(join(dir, 'config.toml'), 'utf8'), original + '\n[x]\napproval_policy = "never"\n');
  } finally {
    s.cleanup();
  }
});
