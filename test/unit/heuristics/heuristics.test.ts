/** Codex parity for the heuristics (safe_cases, historic_safe_cases with the git opt-in, dangerous_cases). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vectors } from '../../helpers/vectors.js';
import { isKnownSafeCommand, isSafeToCallWithExec } from '../../../src/heuristics/safe.js';
import { commandMightBeDangerous } from '../../../src/heuristics/dangerous-script.js';
import { dangerousCommand } from '../../../src/heuristics/dangerous.js';

const label = (c: string[]) => JSON.stringify(c);

test('safe_cases: newest Codex semantics (git off the safe list by default)', () => {
  assert.ok(vectors.safe_cases.length >= 90);
  for (const v of vectors.safe_cases) assert.equal(isKnownSafeCommand(v.command), v.safe, `${label(v.command)} (${v.note})`);
});

test('historic_safe_cases: the read-only git rules only with the opt-in', () => {
  for (const v of vectors.historic_safe_cases) {
    assert.equal(isKnownSafeCommand(v.command, { gitReadOnly: true }), v.safe, `${label(v.command)} with gitReadOnly (${v.note})`);
    if (v.command[0] === 'git') assert.equal(isKnownSafeCommand(v.command), false, `${label(v.command)} without the opt-in`);
  }
});

test('git opt-in never makes overrides, pagers, output files or mutations safe', () => {
  const unsafe = [
    ['git', '-c', 'core.fsmonitor=x', 'status'], ['git', '--paginate', 'log'], ['git', '-p', 'log'], ['git', 'log', '-p'],
    ['git', 'diff', '--ext-diff'], ['git', 'diff', '--textconv'], ['git', 'show', '--output=x'], ['git', 'branch', '-D', 'x'],
    ['git', 'push'], ['git', 'status', '--exec=x'], ['git', '--config-env=core.pager=X', 'log'], ['/usr/bin/git', 'status'],
    ['git'], ['git', '-C'],
  ];
  for (const c of unsafe) assert.equal(isKnownSafeCommand(c, { gitReadOnly: true }), false, label(c));
  for (const c of [['git', 'status'], ['git', 'log', '--oneline', '-5'], ['git', '--git-dir=.git', 'diff'], ['git', 'branch', '-a', '--format=%(refname)']])
    assert.equal(isKnownSafeCommand(c, { gitReadOnly: true }), true, label(c));
});

test('gate-sh is stricter than Codex on option clusters that write files or run programs', () => {
  for (const c of [
    ['rg', '-nz', 'x'],
    ['rg', '-zn', 'x'],
    ['base64', '-do', 'out'],
    ['base64', '-io', 'x'],
  ])
    assert.equal(isKnownSafeCommand(c), false, label(c));
  for (const c of [
    ['rg', '-n', 'x'],
    ['base64', '-d', 'f'],
    ['base64', '-w0', 'f'],
  ])
    assert.equal(isKnownSafeCommand(c), true, label(c));
});

test('bare names only: a path-qualified safe program is never safe', () => {
  for (const c of [['/bin/cat', 'x'], ['./ls'], ['bin/echo', 'hi'], [''], []]) assert.equal(isSafeToCallWithExec(c), false, label(c));
  assert.equal(isSafeToCallWithExec(['sed', '-n', '1,5p', 'f', 'g']), false, 'sed with more than one file');
  assert.equal(isSafeToCallWithExec(['sed', '-n', '1,5pw', 'f']), false);
  assert.equal(isSafeToCallWithExec(['sed', '-n', 'e', 'f']), false);
});

test('dangerous_cases: forced rm anywhere a literal command runs (newest)', () => {
  assert.ok(vectors.dangerous_cases.length >= 40);
  for (const v of vectors.dangerous_cases)
    assert.equal(commandMightBeDangerous(v.command) !== null, v.dangerous, `${label(v.command)} (${v.note})`);
});

test('historic_dangerous_cases: git reset/rm/--force only with the historic git rules opted in', () => {
  for (const v of vectors.historic_dangerous_cases) {
    assert.equal(commandMightBeDangerous(v.command, { historicGit: true }) !== null, v.dangerous, `${label(v.command)} (${v.note})`);
    if (v.command.join(' ').includes('git')) assert.equal(commandMightBeDangerous(v.command), null, `${label(v.command)} without the opt-in`);
  }
});

test('dangerous kinds and the rm flag grammar', () => {
  assert.equal(dangerousCommand(['rm', '-rf', 'x']), 'ForcedRm');
  assert.equal(dangerousCommand(['sudo', 'sudo', '/usr/bin/rm', '-f', 'x']), 'ForcedRm');
  assert.equal(dangerousCommand(['rm', '-r', '--', '-f']), null);
  assert.equal(dangerousCommand(['rm', '--forced']), null);
  assert.equal(dangerousCommand(['rmdir', '-f']), null);
  assert.equal(dangerousCommand([]), null);
  // wrappers seen through by the script analysis
  assert.equal(commandMightBeDangerous(['bash', '-lc', 'timeout 5 rm -rf /tmp/x']), 'ForcedRm');
  assert.equal(commandMightBeDangerous(['bash', '-lc', 'env FOO=1 rm -f x']), 'ForcedRm');
});
