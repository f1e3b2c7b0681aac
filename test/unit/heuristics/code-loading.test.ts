/** Code-loading variables: what turns an escalated run into a prompt. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeLoadingVariables, codeLoadingNames, isCodeLoadingName } from '../../../src/heuristics/code-loading.js';

const names = (env: Record<string, string>, o = {}) => codeLoadingVariables(env, o).map((v) => v.name);

test('loader, shell, git, interpreter, pager and editor variables are flagged', () => {
  const env = {
    LD_PRELOAD: './evil.so', LD_LIBRARY_PATH: '.', LD_AUDIT: 'x', BASH_ENV: 'x', ENV: 'x', PROMPT_COMMAND: 'x',
    GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'x', GIT_CONFIG_PARAMETERS: "'a'='b'",
    GIT_DIR: 'x', GIT_EXEC_PATH: 'x', PYTHONPATH: 'x', PYTHONSTARTUP: 'x', NODE_OPTIONS: '--require x', PERL5LIB: 'x',
    RUBYOPT: 'x', PAGER: 'x', EDITOR: 'x', 'BASH_FUNC_ls%%': '() { rm -rf ~; }', GIT_SSH_COMMAND: 'x',
  };
  assert.deepEqual(names(env), Object.keys(env).sort());
});

test('ordinary variables are not flagged; output is sorted and stable', () => {
  assert.deepEqual(names({ HOME: '/root', LANG: 'C.UTF-8', TERM: 'xterm', PYTHONUNBUFFERED: '1', CI: '1', PATH: '/usr/bin:/bin' }), []);
  assert.deepEqual(names({ PAGER: 'x', EDITOR: 'y' }), ['EDITOR', 'PAGER']);
});

test('PATH: relative or empty entries, and new entries inside writable roots', () => {
  assert.deepEqual(names({ PATH: '.:/usr/bin' }), ['PATH']);
  assert.deepEqual(names({ PATH: '/usr/bin::/bin' }), ['PATH'], 'an empty entry is the cwd');
  assert.deepEqual(names({ PATH: 'bin:/usr/bin' }), ['PATH']);
  assert.deepEqual(names({ PATH: '/work/ws/bin:/usr/bin' }, { writableRoots: ['/work/ws'] }), ['PATH']);
  assert.deepEqual(names({ PATH: '/tmp/evil:/usr/bin' }, { writableRoots: ['/work/ws', '/tmp'] }), ['PATH']);
  assert.deepEqual(names({ PATH: '/opt/go/bin:/usr/bin' }, { writableRoots: ['/work/ws'] }), []);
  assert.deepEqual(names({ PATH: '/opt/go/bin:/usr/bin' }), ['PATH'], 'no writable roots known: only system folders are trusted');
  assert.deepEqual(names({ PATH: '/opt/go/bin:/usr/bin' }, { trusted: { PATH: '/usr/bin:/opt/go/bin' } }), []);
  const [v] = codeLoadingVariables({ PATH: '.:/usr/bin' });
  assert.match(v.reason, /PATH entries that can shadow programs: \./);
});

test('trusted values and gate-sh own entries are not flagged', () => {
  assert.deepEqual(names({ EDITOR: 'vim' }, { trusted: { EDITOR: 'vim' } }), []);
  assert.deepEqual(names({ EDITOR: 'evil' }, { trusted: { EDITOR: 'vim' } }), ['EDITOR']);
  const own = { LD_PRELOAD: ['/opt/gate/shim.so'] };
  assert.deepEqual(names({ LD_PRELOAD: '/opt/gate/shim.so' }, { own }), []);
  assert.deepEqual(names({ LD_PRELOAD: '/opt/gate/shim.so:./evil.so' }, { own }), ['LD_PRELOAD']);
  assert.deepEqual(names({ LD_PRELOAD: '/opt/gate/shim.so ./evil.so' }, { own }), ['LD_PRELOAD']);
});

test('the judged names are exported (for the exec shim to forward exactly these)', () => {
  const { names, prefixes } = codeLoadingNames();
  assert.ok(names.includes('PATH') && names.includes('LD_PRELOAD') && names.includes('BASH_ENV'));
  assert.deepEqual(prefixes.sort(), ['BASH_FUNC_', 'DYLD_', 'GIT_CONFIG', 'LD_']);
  for (const n of [...names, 'GIT_CONFIG_KEY_7', 'BASH_FUNC_x%%', 'LD_FOO']) assert.equal(isCodeLoadingName(n), true, n);
  for (const n of ['HOME', 'TERM', 'LANG', 'GIT_AUTHOR_NAME']) assert.equal(isCodeLoadingName(n), false, n);
});


test('pager and editor variables are judged by their values: a program that runs nothing else is no code loading', () => {
  // what Codex exports to every command, and Claude Code's GIT_EDITOR
  assert.deepEqual(names({ PAGER: 'cat', GIT_PAGER: 'cat', GH_PAGER: 'cat', MANPAGER: 'cat', GIT_EDITOR: 'true', EDITOR: ':' }), []);
  assert.deepEqual(names({ PAGER: 'less -R', GIT_PAGER: '', SYSTEMD_PAGER: 'less', VISUAL: 'true', GIT_SEQUENCE_EDITOR: 'true' }), []);
  // anything else still loads code, and says which variable
  const bad = {
    PAGER: '/tmp/evil',
    GIT_PAGER: 'sh -c "rm -rf ~"',
    GH_PAGER: 'cat; rm x',
    MANPAGER: './cat',
    EDITOR: 'vim',
    GIT_EDITOR: 'true; rm x',
    VISUAL: 'less +!rm',
  };
  assert.deepEqual(names(bad), Object.keys(bad).sort());
  assert.match(codeLoadingVariables({ GIT_PAGER: 'sh -c x' })[0].reason, /^GIT_PAGER can make/);
  // values only matter for pagers and editors: the loader, shells and interpreters stay judged by name
  assert.deepEqual(names({ LD_PRELOAD: 'cat', BASH_ENV: 'true', PYTHONSTARTUP: 'cat', NODE_OPTIONS: '--require ./x.js', LESSOPEN: 'cat' }), [
    'BASH_ENV',
    'LD_PRELOAD',
    'LESSOPEN',
    'NODE_OPTIONS',
    'PYTHONSTARTUP',
  ]);
});

test("an editor variable is judged for the programs that may start an editor: not for git's read-only, transfer and bookkeeping subcommands", () => {
  const git = (...args: string[]) => names({ EDITOR: 'vi', VISUAL: 'vim', GIT_EDITOR: 'emacs' }, { program: '/usr/bin/git', argv: ['git', ...args] });
  // issue 31: the user's EDITOR=vi went with an allowed `git status` out of the sandbox, and was asked about
  assert.deepEqual(git('status'), []);
  assert.deepEqual(git('-C', '/w', '--no-pager', 'log', '--oneline'), []);
  assert.deepEqual(git('--git-dir=/w/.git', 'diff', 'HEAD'), []);
  assert.deepEqual(git('push', 'origin', 'main'), []);
  // what may start an editor, or what git's argv does not say plainly, is judged as before
  for (const args of [['commit'], ['commit', '-m', 'x'], ['rebase', '-i', 'HEAD~2'], ['add', '-p'], ['tag', '-a', 'v1'], ['st'], ['--weird', 'status'], []])
    assert.deepEqual(git(...args), ['EDITOR', 'GIT_EDITOR', 'VISUAL'], `git ${args.join(' ')}`);
  // without the argv, or for another program: judged (a program may start an editor)
  assert.deepEqual(names({ EDITOR: 'vi' }, { program: '/usr/bin/git' }), ['EDITOR']);
  assert.deepEqual(names({ EDITOR: 'vi' }, { program: '/usr/bin/crontab', argv: ['crontab', '-e'] }), ['EDITOR']);
  assert.deepEqual(names({ EDITOR: 'vi' }, { program: '/usr/bin/git-status-lookalike', argv: ['git', 'status'] }), ['EDITOR']);
  // a program that starts nothing reads none; other variables stay judged for git status
  assert.deepEqual(names({ EDITOR: 'vi' }, { program: '/bin/ls', argv: ['ls'] }), []);
  assert.deepEqual(names({ EDITOR: 'vi', PAGER: 'less +!x', LD_PRELOAD: '/tmp/x.so', GIT_DIR: '/tmp/g' }, { program: '/usr/bin/git', argv: ['git', 'status'] }), [
    'GIT_DIR',
    'LD_PRELOAD',
    'PAGER',
  ]);
});

test("git configuration from the environment that only takes code away is no code loading (gemini-cli's shell)", () => {
  // exactly what gemini-cli 0.61.0 gives every command of its shell tool
  const gemini: Record<string, string> = {
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_COUNT: '8',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_TERMINAL_PROMPT: '0',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
  };
  const keys = ['credential.helper', 'core.fsmonitor', 'core.hooksPath', 'core.sshCommand', 'core.pager', 'core.editor', 'sequence.editor', 'diff.external'];
  keys.forEach((k, i) => {
    gemini[`GIT_CONFIG_KEY_${i}`] = k;
    gemini[`GIT_CONFIG_VALUE_${i}`] = k === 'core.pager' ? 'cat' : '';
  });
  assert.deepEqual(names(gemini, { program: '/usr/bin/git', argv: ['git', 'status'] }), []);
  // a pair that sets a program, a pair missing below the count, a count git would not read: judged by name
  const pairs = (v: string) => names({ ...gemini, GIT_CONFIG_VALUE_3: v });
  assert.deepEqual(pairs('ssh -oProxyCommand=/tmp/x'), ['GIT_CONFIG_COUNT', ...Object.keys(gemini).filter((k) => /_(KEY|VALUE)_/.test(k)).sort()]);
  assert.ok(names({ ...gemini, GIT_CONFIG_COUNT: '9' }).includes('GIT_CONFIG_COUNT'));
  assert.ok(names({ ...gemini, GIT_CONFIG_COUNT: ' 8' }).includes('GIT_CONFIG_COUNT'));
  assert.deepEqual(names({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'less +!x' }), [
    'GIT_CONFIG_COUNT',
    'GIT_CONFIG_KEY_0',
    'GIT_CONFIG_VALUE_0',
  ]);
  // another file, a non-empty askpass, git -c's own variable: judged by name
  assert.deepEqual(names({ GIT_CONFIG_GLOBAL: '/tmp/evil', GIT_ASKPASS: '/tmp/x', SSH_ASKPASS: 'x', GIT_CONFIG_PARAMETERS: "'core.pager'='cat'" }), [
    'GIT_ASKPASS',
    'GIT_CONFIG_GLOBAL',
    'GIT_CONFIG_PARAMETERS',
    'SSH_ASKPASS',
  ]);
});
