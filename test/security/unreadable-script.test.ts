/**
 * Issue 30, finding 7: what cannot be read is asked, never allowed. A script with a NUL byte, or over the
 * parsers' 256 KiB, was allowed under on-request by the sandbox heuristic with no pre-flight prompt; now it
 * gets the strictest judgement of its policy (a prompt; `never` refuses it). And a prompt shows the whole
 * command: head and tail with the length (under untrusted it showed the first 200 characters, so a tail
 * was invisible). Each in workspace-write and danger-full-access: no approver, nothing runs; approved, it
 * runs. Real daemon, real gate-sh (the script on its stdin), real bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { execGateOptions } from '../exec-gate/helpers.js';
import { killAll, startDaemon, type DaemonProc } from '../helpers/daemon.js';

/** [name, script]: each creates the file `ran`. */
const SCRIPTS: [string, Buffer][] = [
  // (a NUL byte is no longer unreadable: gate-sh reads a script as bash does, NULs dropped, and the daemon
  // judges exactly what bash runs: issue 32, test/cli/non-utf8.test.ts)
  ['over 256 KiB', Buffer.from(`touch ran\n#${'x'.repeat(300 * 1024)}\n`)],
];

async function attempt(rig: DaemonProc, script: Buffer) {
  rmSync(join(rig.ws, 'ran'), { force: true });
  const r = await run(GATE_SH, [], { env: rig.env, cwd: rig.ws, input: script, timeoutMs: 60_000 });
  return { ran: existsSync(join(rig.ws, 'ran')), ...r };
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`unreadable script, ${mode}, on-request: asked before anything runs; approved, it runs`, async (t) => {
    t.after(killAll);
    const none = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => none.close());
    for (const [name, script] of SCRIPTS) {
      const r = await attempt(none, script);
      assert.equal(r.ran, false, `${name}: ran without a prompt (exit ${r.code}): ${r.stderr}`);
      assert.equal(r.code, 126, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /gate-sh: [^\n]*approv/, `${name}: ${r.stderr}`);
    }
    const asked = await startDaemon(execGateOptions({ rules: [], autoApprove: true, env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => asked.close());
    for (const [name, script] of SCRIPTS) {
      const r = await attempt(asked, script);
      assert.equal(r.ran, true, `${name}: approved, it did not run (exit ${r.code}): ${r.stderr}`);
    }
    assert.ok(asked.prompts.length >= SCRIPTS.length, JSON.stringify(asked.prompts.map((p) => p.reason)));
  });
}

test('unreadable script, never: refused, nothing runs', async (t) => {
  t.after(killAll);
  const rig = await startDaemon(execGateOptions({ rules: [], env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'never' } }));
  t.after(() => rig.close());
  for (const [name, script] of SCRIPTS) {
    const r = await attempt(rig, script);
    assert.equal(r.ran, false, `${name}: ran (exit ${r.code}): ${r.stderr}`);
    assert.equal(r.code, 126, `${name}: ${r.stderr}`);
  }
});

test('untrusted: the prompt shows the head and the tail of a long command, with its length', async (t) => {
  t.after(killAll);
  const rig = await startDaemon(
    execGateOptions({ rules: [], autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'untrusted' } }),
  );
  t.after(() => rig.close());
  // one command: a long head, then the word that matters at its end
  const script = Buffer.from(`touch ${'a'.repeat(500)} ran`);
  const r = await attempt(rig, script);
  assert.equal(r.ran, true, r.stderr);
  const shown = rig.prompts.map((p) => String(p.display)).join('\n');
  assert.match(shown, / ran$/m, shown);
  // shown whole, or cut in the middle with its length (src/text/display.ts): never with its tail cut away
  if (!shown.includes('a'.repeat(500))) assert.match(shown, /\d+ characters/, shown);
});
