// Strict mode with a person attached (issue 17, point 2): a script decided per exec asks at the exec that
// needs a person, with that exec's own approval id and decisions; denied, that exec fails and the script goes
// on; approved, it runs. A write its redirection names is asked up front, and once approved the script runs
// in the turn sandbox and writes it. A write no redirection shows fails in the script's read-only sandbox and
// is offered as the usual sandbox-failure rerun: nothing runs a second time unless a person approved it.
// Real daemon, gate-sh, bash, bubblewrap, exec gate, and a `gate approve --json` console answering as told.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { execGateOptions, run, type Result } from '../exec-gate/helpers.js';
import { approveConsole, type Console } from '../daemon/helpers.js';
import { type DaemonProc, startDaemon } from '../helpers/daemon.js';

const CONFIG = 'approval_policy = "untrusted"\nsandbox_mode = "workspace-write"\n';
let home: string;
let rig: DaemonProc;
let person: Console;
before(async () => {
  home = mkdtempSync('/var/tmp/gate-home-');
  rig = await startDaemon(execGateOptions({ rules: [], config: CONFIG, env: { HOME: home, GATE_APPROVAL_POLICY: 'untrusted' } }));
  writeFileSync(join(rig.ws, 'README.md'), 'b\na\n');
  person = await approveConsole(rig.env, 'person');
});
after(async () => {
  await person?.close();
  await rig.close();
  rmSync(home, { recursive: true, force: true });
});

const gateC = (script: string): Promise<Result> => run(GATE_SH, ['-c', script], { env: rig.env, cwd: rig.ws });

test('an exec nobody allowed is asked when it starts, with its own approval id and decisions: denied it fails, approved it runs', async () => {
  const script = 'for f in README.md; do sort "$f"; done; echo "end $?"';
  for (const decision of ['denied', 'approved'] as const) {
    const ran = gateC(script);
    const p = await person.next('prompt');
    assert.deepEqual(p.command, ['/usr/bin/sort', 'README.md']);
    assert.equal(p.origin, 'exec');
    assert.ok(p.approval_id, JSON.stringify(p));
    assert.ok(Array.isArray(p.available_decisions) && p.available_decisions.includes('approved'), JSON.stringify(p));
    person.answer(p.approval_id, decision);
    const r = await ran;
    if (decision === 'denied') {
      assert.match(r.stderr, /gate-sh: denied: sort README\.md/);
      assert.match(r.stdout, /^end \d+\n$/);
      assert.doesNotMatch(r.stdout, /^a\nb/);
    } else {
      assert.equal(r.stdout, 'a\nb\nend 0\n', r.stderr);
    }
  }
  // nothing else was asked: the loop, echo and the shell's own plumbing ran unasked
  assert.equal(person.events.filter((e) => e.type === 'prompt').length, 2);
});

test('a write a redirection names is asked up front; approved, the script runs in the turn sandbox and writes it', async () => {
  const ran = gateC('for f in README.md; do cat "$f"; done > out.txt');
  const p = await person.next('prompt');
  assert.match(JSON.stringify(p), /write .*\/out\.txt/, JSON.stringify(p));
  assert.equal(existsSync(join(rig.ws, 'out.txt')), false, 'nothing ran before the answer');
  person.answer(p.approval_id, 'approved');
  const r = await ran;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(join(rig.ws, 'out.txt'), 'utf8'), 'b\na\n');
});

test('a write no redirection shows fails in the read-only sandbox and is offered as a rerun: refused, nothing runs twice; approved, it runs', async () => {
  const script = 'for f in README.md; do tee copy.md < "$f"; done';
  for (const rerun of ['denied', 'approved'] as const) {
    const ran = gateC(script);
    const p = await person.next('prompt');
    assert.deepEqual(p.command, ['/usr/bin/tee', 'copy.md']);
    person.answer(p.approval_id, 'approved'); // the exec: tee runs, in the script's read-only sandbox
    const offer = await person.next('prompt');
    assert.equal(offer.origin, 'preflight');
    assert.equal(offer.sandbox_permissions, 'require_escalated');
    assert.match(offer.reason, /^the sandboxed run failed \(read-only file system in the sandbox: tee: copy\.md: Read-only file system\); rerun it outside/);
    person.answer(offer.approval_id, rerun);
    const r = await ran;
    if (rerun === 'denied') {
      assert.equal(r.code, 1);
      assert.equal(r.stdout, 'b\na\n', 'ran once');
      assert.match(r.stderr, /not rerun: User denied execution\n$/);
      assert.equal(existsSync(join(rig.ws, 'copy.md')), false);
    } else {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'b\na\nb\na\n');
      assert.match(r.stderr, /rerunning as approved \(outside the sandbox\)\n$/);
      assert.equal(readFileSync(join(rig.ws, 'copy.md'), 'utf8'), 'b\na\n');
    }
  }
});

test('a write that fails read-only in a script that still exits 0 is offered as the rerun: refused, nothing runs twice; approved, it runs', async () => {
  const script = 'for i in 1; do mkdir out && echo made; done; echo end';
  for (const rerun of ['denied', 'approved'] as const) {
    const ran = gateC(script);
    const p = await person.next('prompt');
    assert.deepEqual(p.command, ['/usr/bin/mkdir', 'out']);
    person.answer(p.approval_id, 'approved'); // the exec: mkdir runs, in the script's read-only sandbox, and fails
    const offer = await person.next('prompt');
    assert.equal(offer.origin, 'preflight');
    assert.equal(offer.sandbox_permissions, 'require_escalated');
    assert.match(offer.reason, /^the sandboxed run failed \(read-only file system in the sandbox: mkdir: cannot create directory .out.: Read-only file system\); rerun it outside/);
    person.answer(offer.approval_id, rerun);
    const r = await ran;
    assert.equal(r.code, 0, r.stderr);
    if (rerun === 'denied') {
      assert.equal(r.stdout, 'end\n', 'ran once');
      assert.match(r.stderr, /not rerun: User denied execution\n$/);
      assert.equal(existsSync(join(rig.ws, 'out')), false);
    } else {
      assert.equal(r.stdout, 'end\nmade\nend\n');
      assert.match(r.stderr, /rerunning as approved \(outside the sandbox\)\n$/);
      assert.equal(existsSync(join(rig.ws, 'out')), true);
    }
  }
});
