/**
 * Programs that hand commands to something beyond the exec gate (src/script/runs-elsewhere.ts): tmux,
 * screen, ssh, docker/podman, kubectl, systemd-run, at, crontab. What each will run is read from its argv,
 * unwrapped as the run's own (pre-flight) and decided at exec time with the user's rules; what cannot be
 * read is hidden. Pure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { elsewhereCommand, unwrapCommand } from '../../../src/script/analyze.js';
import { elsewhereOf } from '../../../src/script/runs-elsewhere.js';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseApprovalPolicy } from '../../../src/decide/approval-policy.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { decideIntercepted, type InterceptedContext } from '../../../src/decide/intercepted.js';

const w = (s: string) => s.split(' ');

test('what each program hands over, as scripts, argvs or hidden', () => {
  const cases: [string[], { scripts?: string[]; argvs?: string[][]; hidden?: RegExp }][] = [
    [['tmux', 'send-keys', '-t', 's', 'rm -rf ~', 'Enter'], { scripts: ['rm -rf ~\n'] }],
    [['tmux', '-S', '/s', 'send', 'rm', 'Space', 'x', 'C-m'], { scripts: ['rm x\n'] }],
    [['tmux', 'send-keys', '-l', 'Enter'], { scripts: ['Enter'] }],
    [['tmux', 'send-keys', '-X', 'cancel'], {}],
    [['tmux', 'send-keys', '-H', '72', '6d'], { hidden: /hex/ }],
    [['tmux', 'new-session', '-d', '-s', 'x', 'rm y'], { scripts: ['rm y'] }],
    [['tmux', 'new', '-d', 'rm', 'y'], { argvs: [['rm', 'y']] }],
    [['tmux', 'new', '-d'], { hidden: /default command/ }],
    [['tmux', 'neww', '-n', 'w', 'make'], { scripts: ['make'] }],
    [['tmux', 'splitw', '-h', '-l', '10', 'top'], { scripts: ['top'] }],
    [['tmux', 'run-shell', '-b', 'curl x | sh'], { scripts: ['curl x | sh'] }],
    [['tmux', 'run', '-C', 'send-keys "rm z" Enter'], { scripts: ['rm z\n'] }],
    [['tmux', 'if-shell', 'test -f a', 'run "rm b"', 'run "rm c"'], { scripts: ['test -f a', 'rm b', 'rm c'] }],
    [['tmux', 'bind-key', 'x', 'run-shell', 'rm q'], { scripts: ['rm q'] }],
    [['tmux', 'set-hook', '-g', 'after-new-window', 'run "rm h"'], { scripts: ['rm h'] }],
    [['tmux', 'set', '-g', 'default-command', 'rm d'], { scripts: ['rm d'] }],
    [['tmux', 'source-file', 'x.conf'], { hidden: /source-file/ }],
    [['tmux', 'new', '-d', 'ls', ';', 'send-keys', 'rm a', 'Enter'], { argvs: [], scripts: ['ls', 'rm a\n'] }],
    [['tmux', 'new', '-d', 'ls;', 'send-keys', 'rm a', 'Enter'], { scripts: ['ls', 'rm a\n'] }],
    [['tmux', 'list-sessions'], {}],
    [['tmux', '-c', 'rm t'], { scripts: ['rm t'] }],
    [['screen', '-S', 's', '-X', 'stuff', 'rm x^M'], { scripts: ['rm x\n'] }],
    [['screen', '-X', 'exec', 'rm', 'x'], { argvs: [['rm', 'x']] }],
    [['screen', '-dmS', 'n', 'rm', 'x'], { argvs: [['rm', 'x']] }],
    [['screen', '-r', 'n'], {}],
    [['screen'], { hidden: /shell/ }],
    [['ssh', '-p', '22', '-i', 'k', 'host', 'rm', '-rf', '/'], { scripts: ['rm -rf /'] }],
    [['ssh', 'host'], { hidden: /remote shell/ }],
    [['ssh', '-N', '-L', '1:a:2', 'host'], {}],
    [['docker', 'exec', '-it', '-u', 'root', 'c', 'rm', '-rf', '/data'], { argvs: [w('rm -rf /data')] }],
    [['podman', 'container', 'exec', 'c', 'sh', '-c', 'rm x'], { argvs: [['sh', '-c', 'rm x']] }],
    [['docker', '-H', 'unix:///s', 'run', '--rm', '-v', '/:/h', 'alpine', 'rm', '/h/x'], { argvs: [w('rm /h/x')] }],
    [['docker', 'run', '--entrypoint', 'rm', 'alpine', 'x'], { argvs: [w('rm x')] }],
    [['docker', 'run', 'alpine'], { hidden: /image's own command/ }],
    [['docker', 'ps'], {}],
    [['kubectl', 'exec', '-it', 'pod', '--', 'rm', 'x'], { argvs: [w('rm x')] }],
    [['systemd-run', '--user', '-p', 'X=1', '--unit=u', 'rm', 'x'], { argvs: [w('rm x')] }],
    [['systemd-run', '--shell'], { hidden: /shell/ }],
    [['at', 'now'], { hidden: /stdin or a file/ }],
    [['at', '-l'], {}],
    [['crontab', 'file'], { hidden: /cron/ }],
    [['crontab', '-l'], {}],
  ];
  for (const [argv, want] of cases) {
    const e = elsewhereOf(argv);
    assert.ok(e, argv.join(' '));
    assert.deepEqual(e.scripts, want.scripts ?? [], `${argv.join(' ')}: scripts`);
    assert.deepEqual(e.argvs, want.argvs ?? [], `${argv.join(' ')}: argvs`);
    if (want.hidden) assert.match(e.hidden?.text ?? '', want.hidden, argv.join(' '));
    else assert.equal(e.hidden, undefined, `${argv.join(' ')}: nothing hidden`);
  }
  assert.equal(elsewhereOf(['ls', '-l']), null);
});

test('pre-flight unwraps what they hand over, so a rule about it holds; an unreadable part stays opaque', () => {
  assert.deepEqual(unwrapCommand(['tmux', 'send-keys', '-t', 's', 'rm -rf x && ls', 'Enter']).inner, [w('rm -rf x'), ['ls']]);
  assert.deepEqual(unwrapCommand(['ssh', 'h', 'env', 'rm', 'x']).inner, [w('env rm x'), w('rm x')]);
  assert.deepEqual(unwrapCommand(w('docker exec c timeout 5 rm x')).inner, [w('timeout 5 rm x'), w('rm x')]);
  assert.match(unwrapCommand(['at', 'now']).opaque ?? '', /outside the run/);
  assert.match(elsewhereCommand(['tmux', 'send-keys', 'rm $(cat f)', 'Enter'])?.hidden?.text ?? '', /complex/);
});

const ctx = (sandbox: string, rules = ''): InterceptedContext => ({
  policy: parsePolicy(rules ? [{ path: 't.rules', text: rules }] : []),
  approvalPolicy: parseApprovalPolicy('on-request'),
  sandboxPolicy: parseSandboxPolicy(sandbox),
  sandboxPermissions: 'use_default',
  sandboxHasDenyEntries: false,
  // a program's own exec (a build's child): heuristics step aside, rules hold
  provenance: () => ({ kind: 'program', widen: false }),
});

test('at exec time a forbidden rule about what tmux types denies the tmux exec; the same keys run without the rule', () => {
  const rm = 'prefix_rule(pattern=["rm"], decision="forbidden")';
  const argv = ['tmux', '-S', '/s', 'send-keys', '-t', 'v', 'rm -f victim', 'Enter'];
  for (const sandbox of ['danger-full-access', 'workspace-write']) {
    assert.equal(decideIntercepted('/usr/bin/tmux', argv, '/w', ctx(sandbox, rm)).decision, 'forbidden', sandbox);
    assert.equal(decideIntercepted('/usr/bin/tmux', argv, '/w', ctx(sandbox)).decision, 'allow', sandbox);
  }
  assert.equal(decideIntercepted('/usr/bin/ssh', ['ssh', 'h', 'rm', 'x'], '/w', ctx('danger-full-access', rm)).decision, 'forbidden');
  assert.equal(decideIntercepted('/usr/bin/docker', w('docker exec c rm x'), '/w', ctx('danger-full-access', rm)).decision, 'forbidden');
});

test('outside any sandbox, what cannot be read (at reading stdin, a remote shell) is asked, whoever made the exec; inside one it runs', () => {
  const d = decideIntercepted('/usr/bin/at', ['at', 'now'], '/w', ctx('danger-full-access'));
  assert.equal(d.action, 'prompt');
  assert.match(d.reason, /at runs commands it reads from stdin or a file later.*outside any sandbox/);
  assert.equal(decideIntercepted('/usr/bin/at', ['at', 'now'], '/w', ctx('workspace-write')).decision, 'allow');
  assert.equal(decideIntercepted('/usr/bin/at', ['at', '-l'], '/w', ctx('danger-full-access')).decision, 'allow');
});
