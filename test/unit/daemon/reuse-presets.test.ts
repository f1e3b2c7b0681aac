// Answers handed over up front (src/daemon/reuse-presets.ts, ReuseGrants.offer and offerScoped): which programs are offered
// to which run and when, and which presets are made (a file changed while decided, or one the decision does
// not let hold, is left out). Uses a temporary folder for the files and the epoch file; no processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReuseGrants } from '../../../src/daemon/reuse-grants.js';
import { fileIdentity, PresetMemo, presetsFor } from '../../../src/daemon/reuse-presets.js';

test('offer: a run gets the programs learned, once, with its second any-argv grant; never its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'presets-'));
  try {
    const g = new ReuseGrants(dir);
    assert.deepEqual(g.offer('r1', '/usr/bin/sed'), []);
    assert.deepEqual(g.offer('r1', '/usr/bin/cat'), ['/usr/bin/sed'], 'second grant of r1');
    assert.deepEqual(g.offer('r1', '/usr/bin/expr'), [], 'once per run');
    assert.deepEqual(g.offer('r2', '/usr/bin/cat'), [], 'a run that asks once pays nothing');
    // the latest first, the asking program left out
    assert.deepEqual(g.offer('r2', '/usr/bin/gcc'), ['/usr/bin/cat', '/usr/bin/expr', '/usr/bin/sed']);
    for (let i = 0; i < 100; i++) g.offer(`x${i}`, `/p/${i}`);
    const offered = [g.offer('r3', '/a'), g.offer('r3', '/b')][1];
    assert.equal(offered.length, 63, 'the 64 latest, less the asking one');
    assert.equal(offered[0], '/a');
    g.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('named: a plan\'s candidates, the learned programs whose file names the script names, then (with a start-up phase) what start-up phases ran; counts nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'presets-'));
  try {
    const g = new ReuseGrants(dir);
    assert.deepEqual(g.named(new Set(['sed']), true), [], 'nothing learned yet');
    g.offer('r1', '/usr/bin/sed');
    g.offer('r1', '/usr/bin/cat');
    g.offer('r1', '/work/cat');
    assert.deepEqual(g.named(new Set(['cat', 'grep']), true), ['/work/cat', '/usr/bin/cat'], 'by file name, the latest first');
    g.startUpRan('/usr/bin/id');
    g.startUpRan('/usr/bin/tty');
    g.startUpRan('/usr/bin/id');
    assert.deepEqual(g.named(new Set(['id', 'sed']), true), ['/usr/bin/sed', '/usr/bin/id', '/usr/bin/tty'], 'then start-up\'s, named or not, once each');
    assert.deepEqual(g.named(new Set(['id', 'sed']), false), ['/usr/bin/sed'], 'a run without a start-up phase: by name only');
    for (let i = 0; i < 20; i++) g.startUpRan(`/s/${i}`);
    assert.equal(g.named(new Set(), true).length, 8, 'the 8 latest of start-up');
    // (a run whose plan brought presets still gets the others with its second grant)
    assert.deepEqual([g.offer('r2', '/usr/bin/sed'), g.offer('r2', '/usr/bin/cat')][1], ['/usr/bin/sed', '/work/cat']);
    g.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('offerScoped: the programs given a scoped grant lately, once per run and scope (its process and image), never the asking one; with a run\'s first, the any-argv ones not handed over yet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'presets-'));
  try {
    const g = new ReuseGrants(dir);
    // none learned yet (the session's first build): nothing handed over, and `offer` still may later
    assert.deepEqual(g.offerScoped('r9', '/bin/sh', 'p9 make'), { scoped: [], anyArgv: [] });
    assert.deepEqual([g.offer('r9', '/usr/bin/sed'), g.offer('r9', '/usr/bin/cat')][1], ['/usr/bin/sed']);
    assert.deepEqual([g.offer('r0', '/usr/bin/sed'), g.offer('r0', '/usr/bin/cat')][1], ['/usr/bin/sed']);
    assert.deepEqual(g.offerScoped('r1', '/bin/sh', 'p1 make'), { scoped: [], anyArgv: ['/usr/bin/cat', '/usr/bin/sed'] }, 'a build: the any-argv ones now');
    assert.deepEqual(g.offer('r1', '/usr/bin/expr'), [], 'handed over already');
    assert.deepEqual(g.offer('r1', '/usr/bin/gcc'), [], 'not again');
    assert.deepEqual(g.offerScoped('r1', '/usr/bin/rm', 'p1 make'), { scoped: [], anyArgv: [] }, 'that scope was offered already');
    assert.deepEqual(g.offerScoped('r1', '/bin/bash', 'p2 make'), { scoped: ['/usr/bin/rm', '/bin/sh'], anyArgv: [] }, 'a new scope: the latest first');
    assert.deepEqual(g.offerScoped('r1', '/bin/sh', 'p2 configure').scoped, ['/bin/bash', '/usr/bin/rm'], 'the same process running another image');
    // a run whose second any-argv grant came first: not handed over twice
    assert.equal([g.offer('r2', '/usr/bin/sed'), g.offer('r2', '/usr/bin/cat')][1].length, 3);
    assert.deepEqual(g.offerScoped('r2', '/usr/bin/rm', 'p2 configure'), { scoped: ['/bin/sh', '/bin/bash'], anyArgv: [] }, 'another run');
    for (let i = 0; i < 40; i++) g.offerScoped('x', `/p/${i}`, `s${i}`);
    assert.equal(g.offerScoped('r3', '/a', 's').scoped.length, 15, 'the 16 latest, less the asking one');
    g.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('presetsFor: the file read through the process root, decided once; left out when changed meanwhile or not held', () => {
  const dir = mkdtempSync(join(tmpdir(), 'presets-'));
  try {
    for (const n of ['keep', 'touched', 'refused', 'sh']) writeFileSync(join(dir, n), '#');
    const asked: string[] = [];
    const holds = (program: string, _real: string | undefined, file: string) => {
      asked.push(program);
      assert.equal(file, `/proc/${process.pid}/root${program}`);
      if (program.endsWith('touched')) utimesSync(program, new Date(1_000), new Date(1_000)); // changed while decided
      return !program.endsWith('refused');
    };
    const programs = [join(dir, 'keep'), join(dir, 'touched'), join(dir, 'refused'), join(dir, 'missing'), 'relative'];
    const out = presetsFor(programs, process.pid, holds, (p) => `grant-${p}`);
    // (`keep` is a program running its own files by its name: every exec below it is below one)
    assert.deepEqual(out, [{ program: join(dir, 'keep'), grant: `grant-${join(dir, 'keep')}`, file: fileIdentity(join(dir, 'keep'))!, below_program: true }]);
    assert.deepEqual(asked, [join(dir, 'keep'), join(dir, 'touched'), join(dir, 'refused')], 'a missing file or a relative name is not decided');
    assert.match(out[0].file, /^\d+ \d+ 1 \d+ \d+ \d+ \d+$/);
    // a shell's children may be the model's text (its -c): not below a program by its name
    assert.equal(presetsFor([join(dir, 'sh')], process.pid, () => true, (p) => p)[0].below_program, undefined);
    // a scoped grant's presets: each held only below the same process
    const scope = { pid: 42, start: 7, ppid: 1 };
    assert.deepEqual(presetsFor([join(dir, 'sh')], process.pid, () => true, (p) => p, scope)[0].scope, scope);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PresetMemo: an answer is remembered by its key for one decider and known-programs state; a file changed while decided, a held `#!` file or a skill\'s program is not remembered', () => {
  const dir = mkdtempSync(join(tmpdir(), 'presets-'));
  try {
    const tool = join(dir, 'tool');
    const script = join(dir, 'script');
    writeFileSync(tool, '\x7fELF');
    writeFileSync(script, '#!/bin/sh\n');
    const memo = new PresetMemo();
    const d1 = {};
    memo.use(d1, 's');
    const context = memo.context({ cwd: dir }, { approvalPolicy: 'on-request', sandboxPolicy: { type: 'workspace-write' }, writable: [dir] });
    assert.equal(memo.context({ cwd: dir }, { approvalPolicy: 'on-request', sandboxPolicy: { type: 'workspace-write' }, writable: [dir] }), context);
    const held = { reusable: true, source: 'heuristic:sandbox', decision: 'allow' };
    const key = PresetMemo.key(context, tool, undefined, fileIdentity(tool)!, undefined);
    assert.equal(memo.get(key), undefined);
    assert.equal(memo.set(key, held, tool, fileIdentity(tool)!), true);
    assert.deepEqual(memo.get(key), held);
    // every part of the key tells answers apart
    assert.equal(memo.get(PresetMemo.key(context, tool, '/elsewhere', fileIdentity(tool)!, undefined)), undefined);
    assert.equal(memo.get(PresetMemo.key(context, tool, undefined, fileIdentity(tool)!, { type: 'Run' })), undefined);
    const withEnv = memo.context({ cwd: dir, env: { LD_PRELOAD: 'x' } }, {});
    assert.equal(memo.get(PresetMemo.key(withEnv, tool, undefined, fileIdentity(tool)!, undefined)), undefined);
    // rewritten: another identity, another key
    const before = fileIdentity(tool)!;
    writeFileSync(tool, '\x7fELF2');
    assert.equal(memo.get(PresetMemo.key(context, tool, undefined, fileIdentity(tool)!, undefined)), undefined);
    // changed while decided (its identity then was `before`): not remembered, and said so
    assert.equal(memo.set(PresetMemo.key(context, tool, undefined, before, 1), held, tool, before), false);
    assert.equal(memo.get(PresetMemo.key(context, tool, undefined, before, 1)), undefined);
    // a held answer for a `#!` file (a head that did not read as one when decided) is not remembered; a refusal is
    const sKey = PresetMemo.key(context, script, undefined, fileIdentity(script)!, undefined);
    assert.equal(memo.set(sKey, held, script, fileIdentity(script)!), true);
    assert.equal(memo.get(sKey), undefined);
    memo.set(sKey, { ...held, reusable: false }, script, fileIdentity(script)!);
    assert.equal(memo.get(sKey)?.reusable, false);
    // a skill's program: never
    assert.equal(PresetMemo.key(context, '/skills/x/scripts/run', undefined, before, undefined), undefined);
    // another decider, or another state of the named programs: everything forgotten
    memo.use(d1, 's');
    assert.deepEqual(memo.get(key), held);
    memo.use(d1, 't');
    assert.equal(memo.get(key), undefined);
    memo.set(key, held, join(dir, 'tool'), fileIdentity(tool)!);
    memo.use({}, 't');
    assert.equal(memo.get(key), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
