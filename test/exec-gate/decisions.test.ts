/**
 * One decision per command: a subcommand approved in pre-flight is not asked again when bash execs it;
 * a prompt that only arises at exec time gets its own approval; a nested `bash -c` is asked up front by
 * its own pre-flight, once. And the nested-shell shims cannot loop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHIM_BIN, SHIMS_DIR } from '../../src/exec/exec-gate.js';
import { gateSh, run, execGateOptions } from './helpers.js';
import { tempEnv } from '../helpers/env.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

const asked = (prompts: Record<string, any>[], word: string) => prompts.filter((p) => JSON.stringify(p.command).includes(word));

test('asked once: in pre-flight, at exec time (own approval id), or up front by a nested shell', async (t) => {
  const rig = await startDaemon(
    execGateOptions({ rules: ['prefix_rule(pattern=["touch"], decision="prompt")', 'prefix_rule(pattern=["bash"], decision="allow")'], autoApprove: true }),
  );
  t.after(async () => (killAll(), rig.close()));

  const pre = await gateSh(rig, 'touch one');
  assert.equal(pre.code, 0, pre.stderr);
  assert.ok(existsSync(join(rig.ws, 'one')));
  assert.equal(asked(rig.prompts, 'one').length, 1, JSON.stringify(rig.prompts));

  writeFileSync(join(rig.ws, 'two.sh'), 'touch two\n');
  const late = await gateSh(rig, 'bash ./two.sh');
  assert.equal(late.code, 0, late.stderr);
  assert.ok(existsSync(join(rig.ws, 'two')));
  const lateAsked = asked(rig.prompts, 'two');
  assert.equal(lateAsked.length, 1, JSON.stringify(rig.prompts));
  assert.notEqual(lateAsked[0].approval_id, asked(rig.prompts, 'one')[0].approval_id);

  writeFileSync(join(rig.ws, 'three.sh'), 'bash -c "touch three"\n');
  const nested = await gateSh(rig, 'bash ./three.sh');
  assert.equal(nested.code, 0, nested.stderr);
  assert.ok(existsSync(join(rig.ws, 'three')));
  assert.equal(asked(rig.prompts, 'three').length, 1, JSON.stringify(rig.prompts));

  // pre-flight sees through `bash -c`; the nested shell's own pre-flight reuses that answer (same run tree)
  const inline = await gateSh(rig, 'bash -c "touch four" && bash -c "bash -c \'touch five\'"');
  assert.equal(inline.code, 0, inline.stderr);
  assert.ok(existsSync(join(rig.ws, 'four')) && existsSync(join(rig.ws, 'five')));
  assert.equal(asked(rig.prompts, 'four').length, 1, JSON.stringify(rig.prompts));
  assert.equal(asked(rig.prompts, 'five').length, 1, JSON.stringify(rig.prompts));
});

test('the nested-shell shim runs the real shell, never itself (no loop, even with shim copies first on PATH)', async () => {
  const te = tempEnv();
  try {
    const d = join(te.dir, 'more');
    mkdirSync(d);
    symlinkSync(join(SHIMS_DIR, 'gate-shell'), join(d, 'bash'));
    const env = { ...te.env, PATH: `${d}:${SHIM_BIN}:/usr/bin:/bin` };
    delete (env as Record<string, string | undefined>).GATE_RUN;
    const r = await run(join(SHIM_BIN, 'bash'), ['-c', 'echo "real $BASH_VERSION"; bash -c "echo nested ok"'], { env, cwd: te.dir, timeoutMs: 10_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^real \d+\.\d+/m);
    assert.match(r.stdout, /^nested ok$/m);
    const none = await run(join(SHIM_BIN, 'zsh'), ['-c', 'true'], { env: { ...env, PATH: d }, cwd: te.dir, timeoutMs: 10_000 });
    if (!existsSync('/usr/bin/zsh') && !existsSync('/bin/zsh')) {
      assert.equal(none.code, 127);
      assert.match(none.stderr, /gate-sh: nested shell: cannot find the real zsh/);
    }
  } finally {
    te.cleanup();
  }
});
