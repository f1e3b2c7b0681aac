// Skill scripts end to end: real daemon (workspace-write turn), real gate-sh, exec gate, escalation runner and
// bubblewrap. A skill script runs with exactly its declared permissions after a human approves it; a cached
// session approval keeps those bounded permissions; a skill without declared permissions stays in the turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approveConsole } from '../daemon/helpers.js';
import { gateSh, execGateOptions } from '../exec-gate/helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

// builtins only (echo, redirections): the script itself is the one exec the gate decides
const SCRIPT = '#!/bin/bash\necho ok > "$1/f" && echo wrote-declared\necho bad > "$2/g" 2>/dev/null && echo wrote-outside || echo outside-refused\n';

function skill(root: string, name: string, frontMatter: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'out'));
  writeFileSync(join(dir, 'SKILL.md'), `---\n${frontMatter}\n---\n# ${name}\n`);
  writeFileSync(join(dir, 'scripts', 'run.sh'), SCRIPT);
  chmodSync(join(dir, 'scripts', 'run.sh'), 0o755);
  return dir;
}

test('a skill script gets exactly its declared write path after approval, also from a cached session approval; none declared → the turn sandbox', {
  timeout: 120_000,
}, async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: [], config: 'sandbox_mode = "workspace-write"\napproval_policy = "on-request"\n' }));
  const human = await approveConsole(rig.env, 'human');
  t.after(async () => (await human.close(), killAll(), await rig.close()));
  const root = join(rig.env.CODEX_HOME, 'skills');
  const writer = skill(root, 'writer', 'name: writer\ndescription: writes its out folder\npermissions:\n  file_system:\n    write: [out]');
  const plain = skill(root, 'plain', 'name: plain\ndescription: declares nothing');
  // "outside": writable in the turn sandbox (the workspace), but not declared by the skill
  const outside = join(rig.ws, 'elsewhere');
  mkdirSync(outside);

  const first = gateSh(rig, `${writer}/scripts/run.sh ${writer}/out ${outside}`);
  const p = await human.next('prompt');
  assert.deepEqual(p.command, [join(writer, 'scripts', 'run.sh'), join(writer, 'out'), outside]);
  assert.ok(JSON.stringify(p.available_decisions).includes('approved_for_session'), JSON.stringify(p.available_decisions));
  human.answer(p.approval_id, 'approved_for_session');
  const r1 = await first;
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.stdout, 'wrote-declared\noutside-refused\n', 'declared path writable, the workspace is not (exactly the profile)');
  assert.equal(readFileSync(join(writer, 'out', 'f'), 'utf8'), 'ok\n');
  assert.ok(!existsSync(join(outside, 'g')));

  // cached for the session: no new prompt, and still bounded by the skill's profile
  const r2 = await gateSh(rig, `${writer}/scripts/run.sh ${writer}/out ${outside}`);
  assert.equal(r2.stdout, 'wrote-declared\noutside-refused\n', r2.stderr);
  assert.equal(human.events.filter((e) => e.type === 'prompt').length, 1, 'the session approval was reused');
  assert.ok(!existsSync(join(outside, 'g')));

  // no declared permissions: nothing to ask, it runs in the turn sandbox and never leaves it (the workspace
  // is writable there; its own out/ under CODEX_HOME is not)
  const r3 = await gateSh(rig, `${plain}/scripts/run.sh ${plain}/out ${outside}`);
  assert.equal(r3.stdout, 'wrote-outside\n', r3.stderr);
  assert.ok(!existsSync(join(plain, 'out', 'f')), 'the skill folder stays read-only in the turn sandbox');
  assert.equal(human.events.filter((e) => e.type === 'prompt').length, 1, 'no prompt for a permission-less skill');
});
