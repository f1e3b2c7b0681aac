/**
 * Issue 30, finding 1: a `#!` script is judged as the program the kernel runs — its interpreter, with the
 * interpreter's arguments and the script — recursively, `#!/usr/bin/env X` included (src/decide/shebang.ts,
 * the post-exec check in shims/gate-launch.c). The attack exactly as reported: `printf '#!/bin/rm -f\n' > x;
 * chmod +x x; ./x victim` with rm forbidden ran rm and the audit said `./x victim allow`. Each spelling is
 * tried in workspace-write and danger-full-access with rm forbidden (nothing removed, denied, audited as
 * rm) and with rm allowed (removed: the same command runs). Real daemon, real gate-sh, real bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execGateOptions, gateSh } from '../exec-gate/helpers.js';
import { killAll, startDaemon, type DaemonProc } from '../helpers/daemon.js';

const FORBID_RM = ['prefix_rule(pattern=["rm"], decision="forbidden")'];
const ALLOW_RM = ['prefix_rule(pattern=["rm"], decision="allow")'];

/** [name, script]: each removes the file `victim` through a `#!` line. */
const SPELLINGS: [string, string][] = [
  ['#!/bin/rm -f (as reported)', `printf '#!/bin/rm -f\\n' > x; chmod +x x; ./x victim`],
  ['#!/usr/bin/env rm', `printf '#!/usr/bin/env rm\\n' > x; chmod +x x; ./x victim`],
  ['a #! script whose interpreter is a #! script', `printf '#!/bin/rm -f\\n' > y; printf '#!%s/y\\n' "$PWD" > x; chmod +x x y; ./x victim`],
  ['from python (os.execv)', `printf '#!/bin/rm -f\\n' > x; chmod +x x; python3 -c 'import os; os.execv("./x", ["./x", "victim"])'`],
];

async function attempt(rig: DaemonProc, script: string) {
  writeFileSync(join(rig.ws, 'victim'), 'x');
  const r = await gateSh(rig, `${script}; echo "status=$?"`, { timeoutMs: 60_000 });
  return { removed: !existsSync(join(rig.ws, 'victim')), ...r };
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`shebang, ${mode}: a #! line naming rm is judged as rm: denied when forbidden, runs when allowed`, async (t) => {
    t.after(killAll);
    const forbid = await startDaemon(execGateOptions({ rules: [...FORBID_RM, 'prefix_rule(pattern=["python3"], decision="allow")'], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => forbid.close());
    for (const [name, script] of SPELLINGS) {
      const r = await attempt(forbid, script);
      assert.equal(r.removed, false, `${name}: rm ran (exit ${r.code}): ${r.stderr}${r.stdout}`);
      // denied as rm: the #! line's own judgement, or (env X) env's exec of rm
      assert.match(r.stderr, /gate-sh: denied: (?:[^\n]*Execution forbidden by policy[^\n]*"\/bin\/rm"|rm [^\n]*Execution forbidden by policy)/, `${name}: ${r.stderr}`);
    }
    // the audit names the program that would have run, not only the script
    const audit = readFileSync(forbid.paths.auditLog, 'utf8');
    assert.match(audit, /"\/bin\/rm","-f","[^"]*x","victim"\][^\n]*forbidden/, audit.slice(-3000));

    const allow = await startDaemon(execGateOptions({ rules: [...ALLOW_RM, 'prefix_rule(pattern=["python3"], decision="allow")'], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => allow.close());
    for (const [name, script] of SPELLINGS) {
      const r = await attempt(allow, script);
      assert.doesNotMatch(r.stderr, /gate-sh: (denied|exec gate)/, `${name}: ${r.stderr}`);
      assert.equal(r.removed, true, `${name}: did not run (exit ${r.code}): ${r.stderr}${r.stdout}`);
    }
  });
}

test('shebang, untrusted: the prompt shows the interpreter the kernel runs, not only the script', async (t) => {
  t.after(killAll);
  const rig = await startDaemon(
    execGateOptions({ rules: [], autoApprove: true, env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'untrusted' } }),
  );
  t.after(() => rig.close());
  writeFileSync(join(rig.ws, 'x'), '#!/bin/rm -f\n', { mode: 0o755 });
  const r = await attempt(rig, './x victim');
  const shown = rig.prompts.map((p) => JSON.stringify(p.command ?? p)).join('\n');
  assert.match(shown, /\/bin\/rm[^\n]*-f[^\n]*x[^\n]*victim/, shown);
  assert.equal(r.removed, true, `approved, it runs: ${r.stderr}`);
});
