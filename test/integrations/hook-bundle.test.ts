/**
 * `gate hook` from its bundle (dist/cjs-src/cli/hook.bundle.cjs, loaded by bin/gate with its V8 code cache):
 * the same answers, byte for byte, as the module graph it was built from (GATE_NO_BUNDLE=1), for both agents'
 * inputs against one real daemon; the build's cache is accepted by V8; and the bundle alone answers (a copy
 * of the launchers next to the bundle and no dist/src), so the fast path is really the one that runs; and
 * when nothing loads, `gate hook` exits 2 (the agents block the command), never another failure status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { GATE_SH_NODE, ROOT, tempEnv } from '../helpers/env.js';
import { daemonForFile } from '../helpers/daemon.js';
import { runGate } from '../daemon/helpers.js';
import { shellCommand, shellWord } from '../../src/text/shell-words.js';

const RULES =
  'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")\nprefix_rule(pattern=["git", "status"], decision="allow")\n';
const rig = daemonForFile({ rules: RULES, rulesFile: 'team.rules', workspace: 'w' });
const HOOK_BUNDLE = join(ROOT, 'dist', 'cjs-src', 'cli', 'hook.bundle.cjs');

const claude = (command: string, cwd: string) => JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, cwd });
const gemini = (command: string, cwd: string, dir?: string) =>
  JSON.stringify({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command, ...(dir ? { dir_path: dir } : {}) }, cwd });

/** Inputs of every kind: commands gate-sh allows, refuses or asks about (each rewritten), another tool, bad input. */
function inputs(cwd: string): [string, string][] {
  const commands = ['git status && echo ok', 'ls -la | wc -l', 'rm -rf somefile', 'timeout "$t" rm -rf x', 'curl -fsS http://127.0.0.1:9/ | sh'];
  return [
    ...commands.map((c): [string, string] => ['claude-code', claude(c, cwd)]),
    ...commands.map((c): [string, string] => ['gemini', gemini(c, cwd)]),
    ['gemini', gemini('git status', cwd, 'sub')],
    ['claude-code', JSON.stringify({ tool_name: 'Read', tool_input: { file_path: '/etc/hosts' } })],
    ['claude-code', 'not json'],
    ['gemini', JSON.stringify({ tool_name: 'run_shell_command', tool_input: {} })],
  ];
}

test("the hook bundle's code cache, as built, is accepted by V8", () => {
  const r = (createRequire(import.meta.url)(GATE_SH_NODE) as { loadBundle(b: string): { exports: Record<string, unknown>; cache: string } }).loadBundle(
    HOOK_BUNDLE,
  );
  assert.equal(r.cache, 'accepted');
  assert.equal(typeof r.exports.run, 'function');
  assert.equal(typeof r.exports.answer, 'function');
});

test('gate hook from its bundle answers as the module graph does: allow (rewritten through gate-sh), no opinion, deny of bad input', async () => {
  const { d } = rig;
  const seen = new Set<string>();
  for (const [agent, input] of inputs(d.ws)) {
    const bundled = await runGate(d.env, ['hook', agent], input);
    const graph = await runGate({ ...d.env, GATE_NO_BUNDLE: '1' }, ['hook', agent], input);
    assert.equal(bundled.code, 0, bundled.stderr);
    assert.deepEqual(bundled, graph, `${agent} ${input}`);
    const j = JSON.parse(bundled.stdout);
    seen.add(j.hookSpecificOutput?.permissionDecision ?? j.decision ?? 'none');
  }
  assert.deepEqual([...seen].sort(), ['allow', 'deny', 'none']);
  const rm = JSON.parse((await runGate(d.env, ['hook', 'claude-code'], claude('rm -rf somefile', d.ws))).stdout).hookSpecificOutput;
  assert.equal(rm.updatedInput.command, shellCommand([join(ROOT, 'bin', 'gate-sh'), '-c', 'rm -rf somefile'])); // gate-sh refuses it by its rule when it runs
  // the same usage errors as `gate hook` always gave
  for (const args of [['hook'], ['hook', 'codex'], ['hook', '--help']]) {
    const b = await runGate(d.env, args);
    assert.deepEqual(b, await runGate({ ...d.env, GATE_NO_BUNDLE: '1' }, args), args.join(' '));
  }
});

test('the bundle alone answers: launchers and bundle copied without dist/src (and the module graph is what is missing then)', async () => {
  const { d } = rig;
  const dir = join(d.te.dir, 'copy');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'dist', 'cjs-src', 'cli'), { recursive: true });
  for (const f of ['gate', 'gate-sh-node', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(dir, 'bin', f));
  // the gate-sh beside the copied `gate` is the one the hook rewrites commands to run through
  symlinkSync(join(ROOT, 'bin', 'gate-sh'), join(dir, 'bin', 'gate-sh'));
  for (const f of ['hook.bundle.cjs', 'hook.bundle.v8cache']) copyFileSync(join(ROOT, 'dist', 'cjs-src', 'cli', f), join(dir, 'dist', 'cjs-src', 'cli', f));
  writeFileSync(join(dir, 'dist', 'cjs-src', 'package.json'), '{"type":"commonjs"}\n');
  const env = { ...d.env, NODE_PATH: join(ROOT, 'node_modules') };
  const input = claude('git status && echo ok', d.ws);
  const run = (e: Record<string, string>) => spawnSync(process.execPath, [join(dir, 'bin', 'gate'), 'hook', 'claude-code'], { env: e, input, encoding: 'utf8' });
  const copied = run(env);
  assert.equal(copied.status, 0, copied.stderr);
  const fromRoot = (await runGate(d.env, ['hook', 'claude-code'], input)).stdout;
  assert.equal(copied.stdout, fromRoot.replaceAll(shellWord(join(ROOT, 'bin', 'gate-sh')), shellWord(join(dir, 'bin', 'gate-sh'))));
  assert.equal(JSON.parse(copied.stdout).hookSpecificOutput.permissionDecision, 'allow');
  // nothing loads (no bundle and no dist/src; a bundle that throws): exit 2, the one status at which both
  // agents block the command (any other failure status lets it run ungated), the reason on stderr
  const noBundle = run({ ...env, GATE_NO_BUNDLE: '1' });
  assert.equal(noBundle.status, 2);
  assert.equal(noBundle.stdout, '');
  assert.match(noBundle.stderr, /^gate-sh: hook: .*dist\/src\/cli\/commands\/hook\.js.*; nothing runs\n$/);
  writeFileSync(join(dir, 'dist', 'cjs-src', 'cli', 'hook.bundle.cjs'), '// gate-sh-build 0123456789abcdef\nthrow new Error("broken build");\n');
  const broken = run(env);
  assert.equal(broken.status, 2);
  assert.equal(broken.stdout, '');
  assert.match(broken.stderr, /^gate-sh: hook: .*; nothing runs\n$/);
});

test('with no daemon running, the hook answers without one; the rewritten command starts it (gate-sh) or is refused', async () => {
  const te = tempEnv();
  try {
    const input = claude('git status >/dev/null 2>&1; echo ran', te.dir);
    const r = await runGate(te.env, ['hook', 'claude-code'], input);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    assert.equal(out.permissionDecision, 'allow', r.stdout);
    assert.equal((await runGate(te.env, ['daemon', 'status', '--json'])).code === 0, false, 'the hook alone starts no daemon');
    // refused autostart: the rewritten command is refused by gate-sh with the reason, it never runs
    const off = spawnSync('bash', ['-c', out.updatedInput.command], { cwd: te.dir, env: { ...te.env, GATE_NO_AUTOSTART: '1' }, encoding: 'utf8' });
    assert.equal(off.status, 126, off.stderr);
    assert.equal(off.stdout, '');
    assert.match(off.stderr, /^gate-sh: /);
    // as the agent runs it: gate-sh starts the daemon and runs the command
    const ran = spawnSync('bash', ['-c', out.updatedInput.command], { cwd: te.dir, env: te.env, encoding: 'utf8' });
    assert.equal(ran.stdout, 'ran\n', ran.stderr);
    const st = await runGate(te.env, ['daemon', 'status', '--json']);
    assert.equal(st.code, 0, st.stderr);
    assert.ok(JSON.parse(st.stdout).pid > 0);
  } finally {
    await runGate(te.env, ['daemon', 'stop']);
    te.cleanup();
  }
});
