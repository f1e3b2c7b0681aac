// `gate policy check` as a real process: byte-identical to `codex execpolicy check`, and bad input gives a
// located `gate-sh:` error, a non-zero exit and no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, tempEnv, type TempEnv } from '../helpers/env.js';
import { reachableGate } from '../helpers/reachable.js';
import { oraclePath, pool, runOracle, type OracleResult } from './oracle.js';

function gate(args: string[], t: TempEnv, wrap: string[] = [], bin = GATE): Promise<OracleResult> {
  const [cmd, ...pre] = wrap.length ? wrap : [process.execPath];
  const argv = wrap.length ? [...pre, process.execPath, bin, 'policy', 'check', ...args] : [bin, 'policy', 'check', ...args];
  return new Promise((resolve) => {
    execFile(cmd, argv, { env: t.env, cwd: t.dir }, (err, stdout, stderr) => {
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

test('same bytes as codex execpolicy check (compact, pretty, no match, paths, several files)', async () => {
  const bin = oraclePath();
  const t = tempEnv();
  try {
    const a = join(t.dir, 'a.rules');
    const b = join(t.dir, 'b.rules');
    writeFileSync(
      a,
      'prefix_rule(pattern=["git", ["status", "log"]], decision="prompt", justification="read \\"only\\" é")\nprefix_rule(pattern=[["ls", "dir"]])\n',
    );
    writeFileSync(b, 'prefix_rule(pattern=["git"], decision="forbidden")\nhost_executable(name="git", paths=["/usr/bin/git"])\n');
    const argsList = [
      ['--rules', a, 'git', 'status', '-s'],
      ['--rules', a, '--pretty', '--', 'git', 'log'],
      ['-r', a, '--rules', b, 'git', 'log', '--oneline'],
      ['-r', a, '-r', b, '--pretty', '--resolve-host-executables', '/usr/bin/git', 'status'],
      ['-r', a, '-r', b, '--resolve-host-executables', '/opt/bin/git', 'status'],
      ['-r', a, '--resolve-host-executables', './git', 'log'],
      ['-r', a, 'ls', '-la'],
      ['-r', a, '--pretty', 'nothing', '--pretty'],
      ['-r', a, 'nothing'],
    ];
    await pool(argsList, 3, async (args) => {
      const [ours, theirs] = await Promise.all([gate(args, t), runOracleIn(bin, args, t)]);
      assert.equal(theirs.status, 0, theirs.stderr);
      assert.equal(ours.status, 0, ours.stderr);
      assert.equal(ours.stdout, theirs.stdout, JSON.stringify(args));
    });
  } finally {
    t.cleanup();
  }
});

// the oracle resolves relative spellings against its cwd, so run it in the same folder as gate
function runOracleIn(bin: string, args: string[], t: TempEnv): Promise<OracleResult> {
  const prev = process.cwd();
  process.chdir(t.dir);
  try {
    return runOracle(bin, args);
  } finally {
    process.chdir(prev);
  }
}

test('bad input: located gate-sh error, non-zero exit, no stack trace — and Codex fails too', async () => {
  const bin = oraclePath();
  const t = tempEnv();
  try {
    const f = (name: string, body: string | Buffer) => {
      const p = join(t.dir, name);
      writeFileSync(p, body);
      return p;
    };
    const cases: [string, string, RegExp][] = [
      ['unterminated', f('u.rules', 'prefix_rule(pattern=["git", "status])\n'), /u\.rules:1:29: starlark error: unfinished string literal/],
      ['unknown builtin', f('k.rules', '\nprefix_rul(pattern=["git"])\n'), /k\.rules:2:1: starlark error: Variable `prefix_rul` not found/],
      [
        'wrong type',
        f('w.rules', 'prefix_rule(pattern=["git"], decision=["allow"])\n'),
        /w\.rules:1:1: .*Type of parameter `decision` doesn't match, expected `str`, actual `list/,
      ],
      ['non-UTF-8', f('n.rules', Buffer.from([0x70, 0x72, 0xff, 0x0a])), /n\.rules:1:3: rules file is not valid UTF-8/],
      ['10 MB', f('big.rules', '#'.repeat(10 * 1024 * 1024)), /big\.rules:1:1: rules file is too large/],
      ['missing', join(t.dir, 'missing.rules'), /missing\.rules: failed to read policy: No such file or directory/],
      ['bad example', f('e.rules', 'prefix_rule(pattern=["git"], not_match=["git status"])'), /e\.rules:1:1: expected example to not match rule/],
    ];
    await pool(cases, 3, async ([what, file, re]) => {
      const [ours, theirs] = await Promise.all([gate(['--rules', file, 'git', 'status'], t), runOracle(bin, ['--rules', file, 'git', 'status'])]);
      assert.equal(ours.status, 1, `${what}: ${ours.stderr}`);
      if (what !== '10 MB') assert.notEqual(theirs.status, 0, `${what}: codex rejects it too`);
      assert.equal(ours.stdout, '', what);
      assert.match(ours.stderr, /^gate: failed to (parse|read) policy at /, what);
      assert.match(ours.stderr, re, what);
      assert.doesNotMatch(ours.stderr, /\n\s+at |Error:|node:internal/, `${what}: no stack trace`);
    });
  } finally {
    t.cleanup();
  }
});

test('an unreadable rules folder stops `gate policy check` without --rules', async () => {
  const t = tempEnv();
  // the other user runs a copy it can reach, wherever this checkout lives (test/helpers/reachable.ts)
  const copy = reachableGate();
  try {
    const rules = join(t.env.CODEX_HOME, 'rules');
    mkdirSync(rules, { recursive: true });
    writeFileSync(join(rules, 'default.rules'), 'prefix_rule(pattern=["git"])\n');
    chmodSync(rules, 0o000);
    chmodSync(t.dir, 0o755);
    // root reads anything, so drop to an unprivileged user for the run
    const wrap = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
    const r = await gate(['git', 'status'], t, wrap, copy.gate);
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      /^gate: failed to read rules files\n\nCaused by:\n {4}.*ch\/rules: failed to read rules files from .*ch\/rules: Permission denied\n$/,
    );
    // readable again: the same command uses those rules
    chmodSync(rules, 0o755);
    const ok = await gate(['git', 'status'], t, wrap, copy.gate);
    assert.equal(ok.stdout, '{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"allow"}}],"decision":"allow"}\n', ok.stderr);
  } finally {
    copy.cleanup();
    t.cleanup();
  }
});

test('usage errors exit 2', async () => {
  const t = tempEnv();
  try {
    for (const args of [['--rules'], ['--rules', 'x.rules'], ['--bogus', 'git'], ['-r', 'x.rules', '--pretty', '--pretty', 'git']]) {
      const r = await gate(args, t);
      assert.equal(r.status, 2, JSON.stringify(args));
      assert.match(r.stderr, /^gate: policy check: .*\n\nusage: gate policy check/);
    }
  } finally {
    t.cleanup();
  }
});

test('gate policy amend appends once; gate policy files lists and validates what loads', async () => {
  const t = tempEnv();
  try {
    const run = (args: string[]) =>
      new Promise<OracleResult>((resolve) =>
        execFile(process.execPath, [GATE, 'policy', ...args], { env: t.env }, (err, stdout, stderr) =>
          resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
        ),
      );
    const file = join(t.env.CODEX_HOME, 'rules', 'default.rules');
    const a = await run(['amend', '--', 'git', 'log', '--oneline']);
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout, `appended: prefix_rule(pattern=["git", "log", "--oneline"], decision="allow") (${file})\n`);
    assert.match((await run(['amend', 'git', 'log', '--oneline'])).stdout, /^already present: /);
    assert.equal(readFileSync(file, 'utf8'), 'prefix_rule(pattern=["git", "log", "--oneline"], decision="allow")\n');
    const f = await run(['files']);
    assert.equal(f.status, 0, f.stderr);
    assert.equal(f.stdout, `${file}\n`);
    const c = await run(['check', 'git', 'log', '--oneline', '-5']);
    assert.equal(c.stdout, '{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","log","--oneline"],"decision":"allow"}}],"decision":"allow"}\n');
    writeFileSync(file, '\nprefix_rule(pattern=["x"], decision="nope")\n', { flag: 'a' });
    const broken = await run(['files']);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /default\.rules:3:1: starlark error: invalid decision: nope/);
    // no prefix: a usage error, with amend's usage (issue 32: was exit 1 from the rules layer)
    const empty = await run(['amend', '--']);
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /^gate: policy amend: name the command prefix to allow\n\nusage: gate policy amend /);
  } finally {
    t.cleanup();
  }
});
