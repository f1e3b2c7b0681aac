/**
 * Issue 30, finding 1: a `#!` script is judged as the program the kernel runs — its interpreter, with the
 * interpreter's arguments and the script — recursively, `#!/usr/bin/env X` included (src/decide/shebang.ts,
 * the post-exec check in shims/launch/follow.c). The attack exactly as reported: `printf '#!/bin/rm -f\n' > x;
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
const PY = 'prefix_rule(pattern=["python3"], decision="allow")';

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
    const forbid = await startDaemon(execGateOptions({ rules: [...FORBID_RM, PY], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => forbid.close());
    for (const [name, script] of SPELLINGS) {
      const r = await attempt(forbid, script);
      assert.equal(r.removed, false, `${name}: rm ran (exit ${r.code}): ${r.stderr}${r.stdout}`);
      // denied as rm: the #! line's own judgement, or (env X) env's exec of rm
      const asRm = /gate-sh: denied: (?:[^\n]*Execution forbidden by policy[^\n]*"\/bin\/rm"|rm [^\n]*Execution forbidden by policy)/;
      assert.match(r.stderr, asRm, `${name}: ${r.stderr}`);
    }
    // the audit names the program that would have run, not only the script
    const audit = readFileSync(forbid.paths.auditLog, 'utf8');
    assert.match(audit, /"\/bin\/rm","-f","[^"]*x","victim"\][^\n]*forbidden/, audit.slice(-3000));

    const allow = await startDaemon(execGateOptions({ rules: [...ALLOW_RM, PY], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => allow.close());
    for (const [name, script] of SPELLINGS) {
      const r = await attempt(allow, script);
      assert.doesNotMatch(r.stderr, /gate-sh: (denied|exec gate)/, `${name}: ${r.stderr}`);
      assert.equal(r.removed, true, `${name}: did not run (exit ${r.code}): ${r.stderr}${r.stdout}`);
    }
    // allowed too, the record of the script's exec names what the kernel ran (the audit names the real program)
    const allowed = readFileSync(allow.paths.auditLog, 'utf8');
    assert.match(allowed, /"kind":"exec"[^\n]*"argv":\["[^"]*x","victim"\],"runs":\["\/(usr\/)?bin\/rm","-f","[^"]*x","victim"\][^\n]*"decision":"allow"/, allowed.slice(-3000));
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

test('shebang, workspace-write: a #! line rewritten while the exec is checked never runs what was not judged', async (t) => {
  t.after(killAll);
  const rig = await startDaemon(execGateOptions({ rules: [...FORBID_RM, PY], env: { GATE_SANDBOX_MODE: "workspace-write" } }));
  t.after(() => rig.close());
  // a flipper renames a script reading `#!/bin/echo -f` and one reading `#!/bin/rm -f` over x as fast as it
  // can, while the script runs ./x 300 times; rm forbidden, so no victim may go
  const script = [
    `printf '#!/bin/echo -f\\n' > a; printf '#!/bin/rm -f\\n' > b; chmod +x a b; cp a x`,
    `python3 -c 'import os,shutil
while not os.path.exists("stop"):
    for s in ("a", "b"): shutil.copy(s, "x.tmp"); os.chmod("x.tmp", 0o755); os.rename("x.tmp", "x")' &`,
    `for i in $(seq 1 300); do : > v$i; ./x v$i > /dev/null 2>&1; done; : > stop; wait`,
    'ls v* | wc -l',
  ].join('\n');
  const r = await gateSh(rig, script, { timeoutMs: 300_000 });
  assert.equal(r.stdout.trim(), '300', `a victim was removed: ${r.stdout} ${r.stderr}`);
});
