// `gate daemon status` in its human form while a console is attached and a prompt is pending: the
// approver's name, the pending prompt (approval id, command, cwd), the policies and the rule files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { approveConsole, runGate } from './helpers.js';
import { gateSh } from '../shell/helpers.js';
import { startDaemon } from '../helpers/daemon.js';

test('gate daemon status (human): attached approvers and pending prompts are shown', async (t) => {
  const te = tempEnv({ GATE_NO_AUTOSTART: '1' });
  mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(join(te.env.GATE_HOME, 'rules', 'team.rules'), 'prefix_rule(pattern=["touch"], decision="prompt")\n');
  const d = await startDaemon({ te, args: ['--sandbox', 'danger-full-access'] });
  const c = await approveConsole(te.env, 'alice');
  t.after(async () => (await c.close(), await d.stop(), te.cleanup()));
  const ws = join(te.dir, 'ws');
  mkdirSync(ws);

  const running = gateSh(['-c', 'touch made'], { env: te.env, cwd: ws });
  const p = await c.next('prompt');
  const s = await runGate(te.env, ['daemon', 'status']);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /^gate daemon: running \(pid \d+, session 'default', since /);
  assert.match(s.stdout, /^approval policy: on-request$/m);
  assert.match(s.stdout, /^sandbox policy: +\{"type":"danger-full-access"\}$/m);
  assert.match(s.stdout, new RegExp(`^  ${join(te.env.GATE_HOME, 'rules', 'team.rules')}$`, 'm'));
  assert.match(s.stdout, /^approvers: +alice$/m);
  assert.match(s.stdout, /^pending prompts: 1$/m);
  assert.ok(s.stdout.includes(`  ${p.approval_id}  touch made  (cwd ${ws})`), s.stdout);
  c.answer(p.approval_id, 'denied');
  assert.equal((await running).code, 126);
  const after = await runGate(te.env, ['daemon', 'status']);
  assert.match(after.stdout, /^pending prompts: none$/m);
});
