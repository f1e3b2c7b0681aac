/**
 * Issue 32, finding 8 and "What to build" 6: `gate` on yargs, used as a person uses it — `gate --help`,
 * `gate help <cmd>` and `gate <cmd> --help` for every command, the bash completion script sourced in a real
 * bash (zsh and fish: their syntax checks, and fish's own completion, where installed), "did you mean", `-v`,
 * a bad option on every command (exit 2, `gate:`, and nothing started), `gate log --decision bogus`,
 * `gate policy amend` alone; `gate init` in a scratch home; `gate rules add --forbid rm` against a real
 * daemon and a real gate-sh (the same command ran before the rule). Real processes throughout; the sweeps over
 * every command (help, misuse) run their command lines through gate's own dispatcher in one process
 * (gate-many.ts), and a sample of them as real `gate` processes must give exactly the same.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { GATE, ROOT, tempEnv } from '../helpers/env.js';
import { daemonForTest, killAll } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';
import { COMMANDS } from '../../src/cli/args/index.js';
import type { CommandSpec } from '../../src/cli/args/spec.js';
import { KEY_DOCS } from '../../src/config/commented.js';
import { configFromTable, DEFAULT_CONFIG, TOP_KEYS, WW_KEYS } from '../../src/config/config.js';
import { parsePolicy, readRulesFile } from '../../src/rules/index.js';

after(killAll);

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `gate ARGS...` with GATE_NO_AUTOSTART (nothing here may start a daemon by accident). */
function gate(args: string[], env: Record<string, string> = { ...(process.env as Record<string, string>), GATE_NO_AUTOSTART: '1' }): Promise<Ran> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [GATE, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** `gate` with each of `lines` in one process (gate-many.ts: gate's dispatcher, output captured per line); the
 * first `sample` of them also as real `gate` processes, which must give exactly the same. */
async function gateMany(lines: string[][], env: Record<string, string>, sample = 2): Promise<Ran[]> {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'test', 'cli', 'gate-many.js'), JSON.stringify(lines)], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const many = JSON.parse(r.stdout) as Ran[];
  assert.equal(many.length, lines.length);
  for (let i = 0; i < Math.min(sample, lines.length); i++) assert.deepEqual(await gate(lines[i], env), many[i], `gate ${lines[i].join(' ')}: a real process`);
  return many;
}

/** Every command path that runs something: ['status'], ['daemon', 'stop'], ['policy', 'check'], ... */
function leaves(specs: readonly CommandSpec[], prefix: string[] = []): string[][] {
  return specs.flatMap((s) => {
    const path = [...prefix, s.command.split(' ')[0]];
    return [...(s.run ? [path] : []), ...leaves(s.subcommands ?? [], path)];
  });
}

const has = (program: string) => spawnSync('/bin/sh', ['-c', `command -v ${program}`]).status === 0;

test('gate --help lists every command; gate help <cmd> is gate <cmd> --help, for every command', { timeout: 300_000 }, async () => {
  const top = await gate(['--help']);
  assert.equal(top.status, 0, top.stderr);
  assert.match(top.stdout, /^usage: gate <command> \[options\]\n/);
  for (const name of [...COMMANDS.map((c) => c.command.split(' ')[0]), 'completion', 'help', 'version'])
    assert.match(top.stdout, new RegExp(`^  gate ${name}\\b`, 'm'), name);
  assert.equal((await gate(['help'])).stdout, top.stdout);
  const paths = [...COMMANDS.map((c) => [c.command.split(' ')[0]]), ...leaves(COMMANDS).filter((p) => p.length > 1)];
  // in pairs: gate help PATH, gate PATH --help (one command and one subcommand as real processes too)
  const sub = paths.findIndex((p) => p.length > 1);
  const order = [paths[sub], ...paths.filter((_, i) => i !== sub)];
  const ran = await gateMany(order.flatMap((p) => [['help', ...p], [...p, '--help']]), process.env as Record<string, string>, 4);
  order.forEach((path, i) => {
    const [viaHelp, viaFlag] = [ran[2 * i], ran[2 * i + 1]];
    assert.equal(viaHelp.status, 0, `${path.join(' ')}: ${viaHelp.stderr}`);
    assert.equal(viaHelp.stdout, viaFlag.stdout, path.join(' '));
    assert.match(viaHelp.stdout, new RegExp(`^usage: gate ${path.join(' ')}\\b`), path.join(' '));
    assert.match(viaHelp.stdout, /\n {2}-h, --help +this help/, `${path.join(' ')}: its options are listed`);
  });
  // the help of one command says what its options do
  const status = await gate(['help', 'status']);
  assert.match(status.stdout, /^usage: gate status \[--json\]\n[\s\S]*--json +one JSON object/);
});

test('gate completion: bash completes commands, subcommands and choices in a real bash; zsh and fish scripts are valid', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'g-compl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const scripts: Record<string, string> = {};
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await gate(['completion', shell]);
    assert.equal(r.status, 0, r.stderr);
    scripts[shell] = join(dir, `gate.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
  assert.equal(spawnSync('bash', ['-n', scripts.bash]).status, 0, 'bash -n');
  const complete = (words: string[]) => {
    const cword = words.length - 1;
    const script = `source ${scripts.bash}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${cword}\n_gate_completions\nprintf '%s\\n' "\${COMPREPLY[@]}"\n`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter(Boolean);
  };
  assert.deepEqual(complete(['gate', 'sta']), ['status']);
  const all = complete(['gate', '']);
  for (const c of ['init', 'rules', 'status', 'daemon', 'policy', 'completion']) assert.ok(all.includes(c), `${c} in ${all.join(' ')}`);
  assert.deepEqual(complete(['gate', 'daemon', '']).sort(), ['restart', 'run', 'start', 'status', 'stop']);
  assert.deepEqual(complete(['gate', 'log', '--decision', '']).sort(), ['allow', 'deny', 'escalate', 'forbidden', 'prompt', 'run']);
  assert.ok(complete(['gate', 'daemon', 'stop', '--']).includes('--force'));
  if (has('zsh')) assert.equal(spawnSync('zsh', ['-n', scripts.zsh]).status, 0, 'zsh -n');
  else t.diagnostic('zsh is not installed: its script was not checked');
  if (has('fish')) {
    assert.equal(spawnSync('fish', ['-n', scripts.fish]).status, 0, 'fish -n');
    const r = spawnSync('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C 'gate sta'; complete -C 'gate daemon '`], { encoding: 'utf8' });
    assert.match(r.stdout, /^status\tthe daemon: /m, r.stderr);
    assert.match(r.stdout, /^restart\tstop, then start/m, r.stderr);
  } else t.diagnostic('fish is not installed: its script was not checked');
});

test('did you mean, -v, and misuse: exit 2 with gate: and the usage, on every command, and nothing starts', { timeout: 300_000 }, async () => {
  const typo = await gate(['statsu']);
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /^gate: unknown command 'statsu'\. Did you mean status\?\n/);
  const v = await gate(['-v']);
  assert.equal(v.status, 0);
  assert.match(v.stdout, /^gate \(gate-sh\) \d+\.\d+\.\d+\n$/);
  assert.equal((await gate(['--version'])).stdout, v.stdout);
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    // `gate hook` is bin/gate's own path (no dispatcher): real processes
    const misused = leaves(COMMANDS).filter((p) => p[0] !== 'hook');
    const ran = await gateMany(misused.map((p) => [...p, '--no-such-option']), te.env);
    const hooks = leaves(COMMANDS).filter((p) => p[0] === 'hook');
    const hookRan = await Promise.all(hooks.map((p) => gate([...p, '--no-such-option'], te.env)));
    [...misused, ...hooks].forEach((path, i) => {
      const r = i < misused.length ? ran[i] : hookRan[i - misused.length];
      assert.equal(r.status, 2, `${path.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, path[0] === 'hook' ? /^gate: hook: / : new RegExp(`^gate: ${path.join(' ')}: `), path.join(' '));
      assert.equal(r.stdout, '', `${path.join(' ')}: nothing on stdout`);
    });
    // none of them started a daemon, wrote a config or a rule
    assert.ok(!existsSync(join(te.env.XDG_RUNTIME_DIR, 'gate-sh')), 'no daemon folder');
    assert.ok(!existsSync(te.env.GATE_HOME) && !existsSync(te.env.CODEX_HOME), 'nothing written');
    const decision = await gate(['log', '--decision', 'bogus'], te.env);
    assert.equal(decision.status, 2);
    assert.match(decision.stderr, /^gate: log: Invalid values:\n {2}Argument: decision, Given: "bogus", Choices: "allow", "prompt", "forbidden", "run", "deny", "escalate"/);
    const amend = await gate(['policy', 'amend'], te.env);
    assert.equal(amend.status, 2);
    assert.match(amend.stderr, /^gate: policy amend: name the command prefix to allow\n\nusage: gate policy amend \[--file PATH\] \[--\] COMMAND\.\.\./);
    const none = await gate([], te.env);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /^gate: name a command\n\nusage: gate <command>/);
    const n = await gate(['log', '-n', 'many'], te.env);
    assert.equal(n.status, 2);
    assert.match(n.stderr, /^gate: log: 'many' is not a whole number/);
  } finally {
    te.cleanup();
  }
});

test('gate init: a commented config.toml with every key and its default, an empty rules file; refuses to overwrite; --force', { timeout: 60_000 }, async () => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  try {
    const config = join(te.env.GATE_HOME, 'config.toml');
    const rules = join(te.env.CODEX_HOME, 'rules', 'default.rules');
    const r = await gate(['init'], te.env);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `wrote ${config}\nwrote ${rules}\n`);
    const text = readFileSync(config, 'utf8');
    assert.deepEqual(Object.keys(parse(text)), [], 'every key is commented out');
    // every key the loader knows is there, with a line saying what it does (a new key fails here until it has one)
    for (const k of [...TOP_KEYS, ...WW_KEYS]) {
      if (k !== 'sandbox_workspace_write') assert.match(text, new RegExp(`^# ${k} = `, 'm'), k);
      assert.ok(KEY_DOCS[k], `${k} has no line in KEY_DOCS (src/config/commented.ts)`);
    }
    assert.doesNotMatch(text, /undocumented/);
    // uncommented, it is the defaults (the audit log at this home's default place)
    const uncommented = text.replace(/^# ((\w+ = .*)|\[sandbox_workspace_write\])$/gm, '$1');
    const table = parse(uncommented) as Record<string, unknown>;
    for (const [k, d] of Object.entries(KEY_DOCS)) if (d.unset) delete table[k]; // no default: an example
    const loaded = configFromTable(table, config);
    assert.deepEqual({ ...loaded, audit_log: undefined }, { ...DEFAULT_CONFIG, audit_log: undefined });
    assert.equal(loaded.audit_log, join(te.env.GATE_HOME, 'audit.jsonl'));
    // the rules file is a valid, empty rules file
    assert.equal(parsePolicy([readRulesFile(rules)]).ruleCount, 0);
    // a second init writes nothing, says which files exist, exit 1
    writeFileSync(config, 'approval_policy = "never"\n');
    const again = await gate(['init'], te.env);
    assert.equal(again.status, 1);
    assert.equal(again.stderr, `gate: init: ${config} and ${rules} exist; nothing was written (--force replaces them)\n`);
    assert.equal(readFileSync(config, 'utf8'), 'approval_policy = "never"\n');
    const forced = await gate(['init', '--force'], te.env);
    assert.equal(forced.status, 0, forced.stderr);
    assert.equal(forced.stdout, `replaced ${config}\nreplaced ${rules}\n`);
    assert.equal(readFileSync(config, 'utf8'), text);
  } finally {
    te.cleanup();
  }
});

test('gate rules add --forbid rm: the running daemon denies rm at once; gate rules list shows the rule', { timeout: 120_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });
  for (const f of ['x', 'y']) writeFileSync(join(d.ws, f), f);
  // before the rule: rm runs
  const before = await gateSh(['-c', 'rm x && echo removed'], { env: d.env, cwd: d.ws });
  assert.equal(before.stdout.toString(), 'removed\n', before.stderr.toString());
  assert.ok(!existsSync(join(d.ws, 'x')));
  const add = await gate(['rules', 'add', '--forbid', 'rm', '--justification', 'no deleting here'], d.env);
  assert.equal(add.status, 0, add.stderr);
  const file = join(d.env.CODEX_HOME, 'rules', 'default.rules');
  assert.equal(add.stdout, `added: forbidden rm (${file})\nin force: the daemon of session 'default' reloaded its 1 rule file(s)\n`);
  assert.equal(readFileSync(file, 'utf8'), 'prefix_rule(pattern=["rm"], decision="forbidden", justification="no deleting here")\n');
  // after it: denied, nothing ran
  const denied = await gateSh(['-c', 'rm y && echo removed'], { env: d.env, cwd: d.ws });
  assert.equal(denied.code, 126);
  assert.equal(denied.stdout.toString(), '');
  assert.match(denied.stderr.toString(), /^gate-sh: denied: rm y: .*no deleting here/m);
  assert.ok(existsSync(join(d.ws, 'y')), 'y is still there');
  const list = await gate(['rules', 'list'], d.env);
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^# the daemon of session 'default' \(pid \d+\); 1 file\(s\), 1 prefix rule\(s\)\n/);
  assert.match(list.stdout, new RegExp(`^${file.replace(/[.]/g, '\\.')}:1 +forbidden +\\["rm"\\] +no deleting here$`, 'm'));
  const json = JSON.parse((await gate(['rules', 'list', '--json'], d.env)).stdout);
  assert.deepEqual(json, [{ file, line: 1, decision: 'forbidden', pattern: ['rm'], justification: 'no deleting here' }]);
  // added twice: there already, the file unchanged; a rule that would not parse is refused before it is written
  assert.match((await gate(['rules', 'add', '--forbid', 'rm', '--justification', 'no deleting here'], d.env)).stdout, /^already there: /);
  const blank = await gate(['rules', 'add', '--prompt', 'git', '--justification', ' '], d.env);
  assert.equal(blank.status, 1);
  assert.match(blank.stderr, /^gate: rules add: cannot add to .*justification cannot be empty/);
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 2);
});

test("yargs is in gate's own bundle only: gate-sh's, the daemon's, gate hook's and gate policy check's have none of it", () => {
  const bundle = (p: string) => readFileSync(join(ROOT, 'dist', 'cjs-src', p), 'utf8');
  assert.match(bundle('cli/gate-cli.bundle.cjs'), /yargs-parser/);
  for (const p of ['cli/gate-sh.bundle.cjs', 'daemon/daemon.bundle.cjs', 'cli/hook.bundle.cjs', 'cli/commands/policy.bundle.cjs'])
    assert.doesNotMatch(bundle(p), /require\("yargs|yargs-parser|YError/, p);
});
