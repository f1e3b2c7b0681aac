/**
 * Where an exec's command came from (issue 29, src/decide/provenance.ts), judged from ancestries as
 * /proc shows them, and what the exec-gate decision does with it: the model's text gets the rules and
 * the heuristics; a program running its own files the rules only, and never leaves the sandbox by a rule;
 * unsure is the stricter of both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { belowProgram, carriesCallersText, ownFilesByName, provenanceOf, scriptOfShell, type Ancestor, type Ancestry } from '../../../src/decide/provenance.js';
import { decideIntercepted, type InterceptedContext } from '../../../src/decide/intercepted.js';
import { parsePolicy } from '../../../src/rules/parser.js';
import { parseSandboxPolicy } from '../../../src/sandbox/policy.js';
import { codeLoadingVariables } from '../../../src/heuristics/code-loading.js';

const p = (exe: string, ...argv: string[]): Ancestor => ({ exe, argv });
/** gate-sh's plumbing above the run's bash: bubblewrap twice, the supervisor (unreadable), the front */
const TOP = [p('/usr/bin/bwrap', 'bwrap', '--args'), p('/usr/bin/bwrap', 'bwrap', '--args'), p('', ''), p('/opt/gate/shims/gate-launch', 'gate-launch')];
const BASH = p('/usr/bin/bash', 'bash', '--norc', '-c', 'make clean', 'gate-sh');
/** the ancestry of an exec made by the last of `down` (given top-down, as one reads a process tree) */
const below = (...down: Ancestor[]): Ancestry => ({ chain: [...down].reverse().concat(TOP), complete: true });

test('the run\'s own shell, -c strings, inline code, stdin and wrappers carry the model\'s text', () => {
  assert.deepEqual(provenanceOf(below(BASH), ['/bin/rm', 'rm', '-rf', 'x']), { kind: 'model', widen: true });
  for (const a of [
    p('/usr/bin/dash', 'sh', '-c', 'rm -rf x'),
    p('/usr/bin/bash', 'bash', '-ec', 'rm -rf x'),
    p('/usr/bin/python3.11', 'python3', '-c', 'import os; os.system("rm -rf x")'),
    p('/usr/bin/python3.11', 'python3', '-'),
    p('/usr/bin/node', 'node', '-e', 'require("child_process").execSync("rm -rf x")'),
    p('/usr/bin/perl', 'perl', '-we', 'system("rm -rf x")'),
    p('/usr/bin/xargs', 'xargs', 'rm', '-rf'),
    p('/usr/bin/find', 'find', '.', '-exec', 'rm', '-rf', '{}', '+'),
    p('/usr/bin/timeout', 'timeout', '5', 'rm', '-rf', 'x'),
    p('/usr/bin/env', 'env', 'A=1', 'rm', '-rf', 'x'),
    p('/usr/bin/busybox', 'busybox', 'sh', '-c', 'rm -rf x'),
  ]) {
    assert.equal(carriesCallersText(a), true, a.argv.join(' '));
    assert.deepEqual(provenanceOf(below(BASH, a), ['/bin/rm', 'rm', '-rf', 'x']), { kind: 'model', widen: true }, a.argv.join(' '));
  }
});

test('a program running its own files: make, configure (also as sh ./configure), a script file, npm, a module', () => {
  for (const a of [
    p('/usr/bin/make', 'make', 'clean'),
    p('/usr/bin/dash', '/bin/sh', './configure', '--prefix=/usr'),
    p('/usr/bin/bash', 'bash', './build.sh'),
    p('/usr/bin/python3.11', 'python3', '-u', 'setup.py', 'build'),
    p('/usr/bin/python3.11', 'python3', '-m', 'pytest'),
    p('/usr/bin/node', 'node', '/usr/bin/npm', 'test'),
    p('/usr/bin/perl', 'perl', 'Makefile.PL'),
    p('/usr/bin/gcc-12', 'gcc', '-c', 'x.c'),
  ]) {
    assert.equal(carriesCallersText(a), false, a.argv.join(' '));
    // directly, and under the recipe's own `sh -c` (everything under a program is the program's)
    const direct = provenanceOf(below(BASH, a), ['/bin/rm', 'rm', '-f', 'conftest']);
    assert.equal(direct.kind, 'program', a.argv.join(' '));
    assert.equal(direct.widen, false);
    assert.deepEqual(direct.by, a.argv);
    const nested = provenanceOf(below(BASH, a, p('/usr/bin/dash', 'sh', '-c', 'rm -f conftest')), ['/bin/rm', 'rm', '-f', 'conftest']);
    assert.equal(nested.kind, 'program', a.argv.join(' '));
    // inline code a program runs is the program's text, not the model's
    const inline = provenanceOf(below(BASH, a, p('/usr/bin/python3.11', 'python3', '-c', 'x')), ['/bin/rm', 'rm', '-f', 'x']);
    assert.equal(inline.kind, 'program', a.argv.join(' '));
  }
});

test("a child whose name the program's own command line carries is the model's text (heuristics), never widened", () => {
  const npx = p('/usr/bin/node', 'node', '/usr/bin/npx', 'rimraf', 'dist');
  assert.deepEqual(provenanceOf(below(BASH, npx, p('/usr/bin/dash', 'sh', '-c', 'rimraf dist')), ['/usr/local/bin/rimraf', 'rimraf', 'dist']), {
    kind: 'model',
    widen: false,
    by: npx.argv,
  });
  const alias = p('/usr/bin/git', 'git', '-c', 'alias.x=!rm -rf y', 'x');
  assert.equal(provenanceOf(below(BASH, alias, p('/usr/bin/dash', 'sh', '-c', 'rm -rf y "$@"')), ['/bin/rm', 'rm', '-rf', 'y']).kind, 'model');
  // a hook git runs is the repository's file, not the model's text
  const commit = p('/usr/bin/git', 'git', 'commit', '-m', 'msg');
  assert.equal(provenanceOf(below(BASH, commit, p('/usr/bin/dash', '/bin/sh', '.git/hooks/pre-commit')), ['/bin/rm', 'rm', '-f', 'x']).kind, 'program');
});

test('a program that replaces itself by the command its own command line spells out is a wrapper in deed; a fork of make is not', () => {
  const runner = p('/w/bin/runner', 'runner', '--keep', '/usr/bin/touch', 'touch', '/x');
  assert.deepEqual(provenanceOf(below(BASH, runner), ['/usr/bin/touch', 'touch', '/x']), { kind: 'model', widen: true });
  // another command than the one spelled out: not the wrapper's (its name is in the text: heuristics, no widening)
  assert.deepEqual(provenanceOf(below(BASH, runner), ['/usr/bin/touch', 'touch', '/y']), { kind: 'model', widen: false, by: runner.argv });
  assert.equal(provenanceOf(below(BASH, runner), ['/usr/bin/cp', 'cp', '/y']).kind, 'program');
  // make's forked child execs a recipe: its parent is a copy of it, so it is not replacing itself
  const make = p('/usr/bin/make', 'make', 'rm', '-f', 'x');
  assert.equal(provenanceOf(below(BASH, make, make), ['/bin/rm', 'rm', '-f', 'x']).kind, 'model');
  assert.equal(provenanceOf(below(BASH, make, make), ['/bin/rm', 'rm', '-f', 'x']).widen, false);
});

test('unsure (no ancestry, or not read to the run\'s gate-sh): heuristics apply, nothing widens', () => {
  assert.deepEqual(provenanceOf(null, ['/bin/rm', 'rm']), { kind: 'unsure', widen: false });
  assert.deepEqual(provenanceOf({ chain: [], complete: true }, ['/bin/rm', 'rm']), { kind: 'unsure', widen: false });
  // the run's gate-sh not found above (it exited, or the pid named someone else): a make found there is
  // not trusted to be the run's, and no plumbing was met
  const lost: Ancestry = { chain: [p('/usr/bin/dash', 'sh', '-c', 'rm -rf x'), p('/usr/bin/make', 'make')], complete: false };
  assert.deepEqual(provenanceOf(lost, ['/bin/rm', 'rm']), { kind: 'unsure', widen: false });
  // plumbing met but the top not: the segment below it still judges, widening does not
  const partial: Ancestry = { chain: [p('/usr/bin/make', 'make'), BASH, ...TOP.slice(0, 2)], complete: false };
  assert.equal(provenanceOf(partial, ['/bin/rm', 'rm']).kind, 'program');
  const partialModel: Ancestry = { chain: [BASH, ...TOP.slice(0, 2)], complete: false };
  assert.deepEqual(provenanceOf(partialModel, ['/bin/rm', 'rm']), { kind: 'model', widen: false });
});


test("a process the plumbing adopted (a build's orphaned job) is not the run's own shell: unsure, nothing widens", () => {
  // a recipe's `(touch /x &)` once its shell exited: bubblewrap's init (or the supervisor) is its parent now
  const orphan: Ancestor = { ...p('/usr/bin/dash', 'sh', '-c', '(touch /x) &'), adopted: true };
  assert.deepEqual(provenanceOf(below(orphan), ['/usr/bin/touch', 'touch', '/x']), { kind: 'unsure', widen: false });
  const inline: Ancestor = { ...p('/usr/bin/python3.11', 'python3', '-c', 'x'), adopted: true };
  assert.deepEqual(provenanceOf(below(inline, p('/usr/bin/dash', 'sh', '-c', 'touch /x')), ['/usr/bin/touch', 'touch', '/x']), { kind: 'unsure', widen: false });
  // the run's own shell, the first process the plumbing started: as before
  assert.deepEqual(provenanceOf(below({ ...BASH, adopted: false }), ['/usr/bin/touch', 'touch', '/x']), { kind: 'model', widen: true });
});
test('a nested gate-sh under make: its own commands get the heuristics, but nothing leaves the sandbox by a rule', () => {
  const make = p('/usr/bin/make', 'make');
  const nested = below(BASH, make, p('/usr/bin/dash', 'sh', '-c', 'gate-sh -c "git push"'), p('/opt/gate/shims/gate-sh', 'gate-sh', '-c', 'git push'), p('/usr/bin/bash', 'bash', '-c', 'git push'));
  assert.deepEqual(provenanceOf(nested, ['/usr/bin/git', 'git', 'push']), { kind: 'model', widen: false });
});

test('sh ./configure is judged as ./configure', () => {
  assert.deepEqual(scriptOfShell(['sh', './configure', '--prefix=/x']), ['./configure', '--prefix=/x']);
  assert.deepEqual(scriptOfShell(['/bin/bash', '-e', '-o', 'pipefail', 'build.sh']), ['build.sh']);
  assert.equal(scriptOfShell(['bash', '-c', 'ls']), null);
  assert.equal(scriptOfShell(['bash']), null);
  assert.equal(scriptOfShell(['make', 'x']), null);
});

const ctxOf = (rules: string, over: Partial<InterceptedContext> = {}): InterceptedContext => ({
  policy: parsePolicy(rules ? [{ path: '/r/default.rules', text: rules }] : []),
  approvalPolicy: 'on-request',
  sandboxPolicy: parseSandboxPolicy('workspace-write'),
  sandboxPermissions: 'use_default',
  ...over,
});
const PROGRAM = () => ({ kind: 'program' as const, widen: false, by: ['make', 'clean'] });
const MODEL = () => ({ kind: 'model' as const, widen: true });
const UNSURE = () => ({ kind: 'unsure' as const, widen: false });

test('exec decision: the heuristics judge the model\'s rm -rf, not a build\'s; forbidden and prompt rules hold in both', () => {
  const rm = ['rm', '-rf', 'build'];
  for (const ap of ['on-request', 'on-failure', 'never', 'untrusted'] as const) {
    const model = decideIntercepted('/usr/bin/rm', rm, '/w', ctxOf('', { approvalPolicy: ap, provenance: MODEL }));
    assert.notEqual(model.decision, 'allow', ap);
    const unsure = decideIntercepted('/usr/bin/rm', rm, '/w', ctxOf('', { approvalPolicy: ap, provenance: UNSURE }));
    assert.equal(unsure.decision, model.decision, ap);
    const build = decideIntercepted('/usr/bin/rm', rm, '/w', ctxOf('', { approvalPolicy: ap, provenance: PROGRAM }));
    assert.equal(build.decision, 'allow', ap);
    assert.deepEqual(build.action, { type: 'Run' }, ap);
    assert.equal(build.decided_by.type === 'heuristic' && build.decided_by.name, 'program');
  }
  // untrusted asks about any unknown command the model wrote, not about a compiler a build runs
  assert.equal(decideIntercepted('/usr/bin/cc', ['cc', '-c', 'x.c'], '/w', ctxOf('', { approvalPolicy: 'untrusted', provenance: MODEL })).decision, 'prompt');
  assert.equal(decideIntercepted('/usr/bin/cc', ['cc', '-c', 'x.c'], '/w', ctxOf('', { approvalPolicy: 'untrusted', provenance: PROGRAM })).decision, 'allow');
  const forbidden = decideIntercepted('/usr/bin/rm', rm, '/w', ctxOf('prefix_rule(pattern=["rm"], decision="forbidden")', { provenance: PROGRAM }));
  assert.deepEqual(forbidden.action, { type: 'Deny', reason: 'Execution forbidden by policy' });
  const prompt = decideIntercepted('/usr/bin/rm', rm, '/w', ctxOf('prefix_rule(pattern=["rm"], decision="prompt")', { provenance: PROGRAM }));
  assert.equal(prompt.action, 'prompt');
  // approved, a program's child still runs in place
  assert.deepEqual(prompt.on_approval, { type: 'Run' });
});

test('exec decision: an allow rule takes the model\'s command out of the sandbox, never a program\'s child or an unsure one', () => {
  const rules = 'prefix_rule(pattern=["rm"], decision="allow")';
  const env = { MAKEFLAGS: ' -- CC=cc', MFLAGS: '' };
  const model = decideIntercepted('/usr/bin/rm', ['rm', '-f', 'x'], '/w', ctxOf(rules, { provenance: MODEL }));
  assert.deepEqual(model.action, { type: 'Escalate', execution: { type: 'Unsandboxed' } });
  for (const prov of [PROGRAM, UNSURE]) {
    // (a build's MAKEFLAGS no longer matter: nothing crosses out of the sandbox)
    const d = decideIntercepted('/usr/bin/rm', ['rm', '-f', 'libz.so'], '/w', ctxOf(rules, { provenance: prov, env }));
    assert.deepEqual(d.action, { type: 'Run' });
    assert.equal(d.decision_driven_by_policy, true);
    assert.equal(d.code_loading.length, 0);
    assert.match(d.reason, /runs in place/);
  }
  // the provenance is only worked out where it matters: not for an unknown program the sandbox holds
  let asked = 0;
  decideIntercepted('/usr/bin/cc', ['cc', 'x.c'], '/w', ctxOf('', { provenance: () => (asked++, MODEL()) }));
  assert.equal(asked, 0);
});

test('a program\'s own `sh -c` script is not parsed by the heuristics; the model\'s is, and the rules hold on both', () => {
  // configure's feature test: a long script, parsed again at each of its runs when the heuristics read it
  const long = ['sh', '-c', `as_nop=:\n${'test -n "$x" && echo ok || exit 1\n'.repeat(300)}rm -rf conftest*`];
  const model = decideIntercepted('/bin/sh', long, '/w', ctxOf('', { provenance: MODEL }));
  assert.equal(model.decision, 'prompt');
  // the program's: allowed as a program's exec, whatever its script says (its own execs are judged as they come)
  for (const argv of [long, ['sh', '-c', 'echo hi']]) {
    const build = decideIntercepted('/bin/sh', argv, '/w', ctxOf('', { provenance: PROGRAM }));
    assert.deepEqual(build.action, { type: 'Run' });
    assert.equal(build.decided_by.type === 'heuristic' && build.decided_by.name, 'program');
  }
  const forbidden = decideIntercepted('/bin/sh', long, '/w', ctxOf('prefix_rule(pattern=["sh"], decision="forbidden")', { provenance: PROGRAM }));
  assert.deepEqual(forbidden.action, { type: 'Deny', reason: 'Execution forbidden by policy' });
});

test('code-loading variables are judged per program that reads them (issue 29 point 3)', () => {
  const env = { MAKEFLAGS: 'SHELL=/w/evil', PYTHONPATH: '/w/evil', NODE_OPTIONS: '--require /w/evil.js', LD_PRELOAD: '/w/evil.so', BASH_ENV: '/w/evil.sh' };
  const names = (program?: string) => codeLoadingVariables(env, { writableRoots: ['/w'], ...(program ? { program } : {}) }).map((v) => v.name);
  // unknown program: every one
  assert.deepEqual(names(), ['BASH_ENV', 'LD_PRELOAD', 'MAKEFLAGS', 'NODE_OPTIONS', 'PYTHONPATH']);
  // the readers, and any program that may start one (git runs hooks): every one
  assert.deepEqual(names('/usr/bin/make'), ['BASH_ENV', 'LD_PRELOAD', 'MAKEFLAGS', 'NODE_OPTIONS', 'PYTHONPATH']);
  assert.deepEqual(names('/usr/bin/git'), ['BASH_ENV', 'LD_PRELOAD', 'MAKEFLAGS', 'NODE_OPTIONS', 'PYTHONPATH']);
  // a program that starts no other program: the loader's and the shells' variables only
  assert.deepEqual(names('/usr/bin/rm'), ['BASH_ENV', 'LD_PRELOAD']);
  assert.deepEqual(names('/usr/bin/curl'), ['BASH_ENV', 'LD_PRELOAD']);
});

test('the scope of a program\'s reuse: its process when it is an ancestor of the exec\'ing one, never that process itself', () => {
  const id = (pid: number) => ({ pid, start: 1000 + pid, ppid: pid - 1 });
  const make: Ancestor = { ...p('/usr/bin/make', 'make', '-s'), id: id(40) };
  const fork: Ancestor = { ...p('/usr/bin/make', 'make', '-s'), id: id(41) };
  const sh: Ancestor = { ...p('/usr/bin/dash', 'sh', '-c', 'rm -f x'), id: id(42) };
  // make's forked child, and the recipe's shell under it: below make
  assert.deepEqual(provenanceOf(below(BASH, make, fork), ['/bin/rm', 'rm', '-f', 'x']).scope, id(40));
  assert.deepEqual(provenanceOf(below(BASH, make, sh), ['/bin/rm', 'rm', '-f', 'x']).scope, id(40));
  // the program is the exec'ing process itself (its exec may be a wrapper's in deed): no scope
  const own = provenanceOf(below(BASH, make), ['/bin/rm', 'rm', '-f', 'x']);
  assert.equal(own.kind, 'program');
  assert.equal(own.scope, undefined);
  // the model's text and the unsure have none; nor a program whose process is not known
  assert.equal(provenanceOf(below({ ...BASH, id: id(30) }, sh), ['/bin/rm', 'rm', '-f', 'x']).scope, undefined);
  assert.equal(provenanceOf(below(p('/usr/bin/make', 'make'), sh), ['/bin/rm', 'rm', '-f', 'x']).scope, undefined);
  // a child the program's own command line names is the model's text: no scope
  assert.equal(provenanceOf(below({ ...p('/usr/bin/npx', 'npx', 'rimraf', 'x'), id: id(50) }, fork), ['/usr/bin/rimraf', 'rimraf', 'x']).scope, undefined);
});

test('below a program running its own files: every exec under a new program that is one, or that runs below one', () => {
  const id = (pid: number) => ({ pid, start: 1000 + pid, ppid: pid - 1 });
  // the exec'ing process (a forked child of the run's bash, a copy of it) and its ancestors
  const fork = (...down: Ancestor[]): Ancestry => below(...down, { ...down[down.length - 1], id: id(60) });
  // programs by their name, at any place: their forked children's execs are below them
  assert.equal(belowProgram(fork(BASH), p('/usr/bin/make', 'make', '-s')), true);
  assert.equal(belowProgram(fork(BASH), p('/usr/bin/dash', 'sh', './configure', '-q')), true);
  assert.equal(belowProgram(fork(BASH), p('/usr/bin/python3.11', 'python3', 'x.py')), true);
  // the model's text: a shell's -c, inline code, a wrapper; not below a program
  for (const image of [p('/usr/bin/dash', 'sh', '-c', 'rm -rf x'), p('/usr/bin/python3.11', 'python3', '-c', 'import os'), p('/usr/bin/env', 'env', 'rm', 'x')])
    assert.equal(belowProgram(fork(BASH), image), false, image.argv.join(' '));
  // ... unless a program made them: make's recipe's shell, its python -c
  const make = { ...p('/usr/bin/make', 'make'), id: id(40) };
  assert.equal(belowProgram(fork(BASH, make), p('/usr/bin/dash', 'sh', '-c', 'rm -rf x')), true);
  assert.equal(belowProgram(fork(BASH, make), p('/usr/bin/python3.11', 'python3', '-c', 'import os')), true);
  // a wrapper the run's bash runs in place: its children are the model's text
  assert.equal(belowProgram(below(BASH), p('/usr/bin/timeout', 'timeout', '5', 'rm', 'x')), false);
  // nothing read: never
  assert.equal(belowProgram(null, p('/usr/bin/make', 'make')), false);
  assert.equal(belowProgram({ chain: [], complete: false }, p('/usr/bin/make', 'make')), false);
  // by name alone, wherever the program runs: not shells, interpreters, text programs, wrappers or plumbing
  assert.equal(ownFilesByName('/usr/bin/make'), true);
  assert.equal(ownFilesByName('/usr/bin/cc', '/usr/bin/x86_64-linux-gnu-gcc-12'), true);
  for (const n of ['/bin/sh', '/usr/bin/python3', '/usr/bin/node', '/usr/bin/sed', '/usr/bin/env', '/usr/bin/xargs', '/usr/bin/bwrap', '', '/bin/busybox'])
    assert.equal(ownFilesByName(n), false, n);
  // the name as exec'd and the file it is: both must be one (a symlink named like a program to python)
  assert.equal(ownFilesByName('/w/bin/tool', '/usr/bin/python3.11'), false);
});


test("code handed over through stdin or a descriptor is the model's text, however the program reads it", () => {
  const rm = ['/bin/rm', 'rm', '-rf', 'x'];
  // a shell or an interpreter whose script is a pipe: the caller's text, as `python3 -` is
  for (const a of [
    p('/usr/bin/bash', 'bash', '/dev/stdin'),
    p('/usr/bin/bash', 'bash', '/dev/fd/63'),
    p('/usr/bin/dash', 'sh', '/proc/self/fd/3'),
    p('/usr/bin/python3.11', 'python3', '/dev/fd/0'),
    p('/usr/bin/python3.11', 'python3', '-u', '/dev/fd/63', 'arg'),
    p('/usr/bin/node', 'node', '/dev/stdin'),
    p('/usr/bin/gawk', 'awk', '-f', '/dev/fd/63'),
    p('/usr/bin/gawk', 'awk', '-f', '-'),
  ]) {
    assert.equal(carriesCallersText(a), true, a.argv.join(' '));
    assert.deepEqual(provenanceOf(below(BASH, a, p('/usr/bin/dash', 'sh', '-c', 'rm -rf x')), rm), { kind: 'model', widen: true }, a.argv.join(' '));
  }
  assert.equal(carriesCallersText(p('/usr/bin/gawk', 'awk', '-f', 'prog.awk')), false);
  assert.equal(carriesCallersText(p('/usr/bin/bash', 'bash', './build.sh')), false);
  // a program given the model's text inline besides its own files: the heuristics, never the widening
  for (const a of [
    p('/usr/bin/make', 'make', '-f', '-'),
    p('/usr/bin/make', 'make', '-f-'),
    p('/usr/bin/make', 'make', '--file=/dev/fd/63', 'x'),
    p('/usr/bin/make', 'make', '--eval=x: ; $(CMD)', 'x'),
    p('/usr/bin/make', 'make', '-E', 'x: ; $(CMD)', 'x'),
    // npm's exec: its command line is its title, its arguments gone
    p('/usr/bin/node', 'npm exec', '', '', ''),
    p('/usr/bin/node', 'npm x', '', ''),
    p('/usr/bin/node', 'node', '/usr/bin/npx', '-c', 'r'),
    p('/usr/bin/node', 'node', '/usr/bin/npm', 'exec', '--', 'r'),
  ]) {
    const under = provenanceOf(below(BASH, a, p('/usr/bin/dash', 'sh', '-c', 'rm -rf x')), rm);
    assert.deepEqual(under, { kind: 'model', widen: false, by: a.argv }, a.argv.join(' '));
  }
  // make with its own makefile, npm running a package's script: programs, as before
  for (const a of [p('/usr/bin/make', 'make', '-f', 'Makefile.gen', 'all'), p('/usr/bin/node', 'npm run t', '', ''), p('/usr/bin/node', 'node', '/usr/bin/npm', 'test')])
    assert.equal(provenanceOf(below(BASH, a, p('/usr/bin/dash', 'sh', '-c', 'rm -rf x')), rm).kind, 'program', a.argv.join(' '));
});
