/**
 * Scoped answers handed over up front (docs/exec-gate.md, "Answers handed over up front"; src/daemon/reuse-grants.ts,
 * offerScoped): a grant that holds below one program's process (make's `rm -rf`, its `sh -c`) comes with the other
 * programs given such a grant lately, each decided as that process's exec of it would be, below the same make:
 * the second make's first `rm -rf` is answered by its supervisor (audited, marked reused); with a run's first
 * such grant, the answers that hold for any argv anywhere in the run come too (`expr`, recorded with its own
 * source). Never when a rule
 * names rm (forbidden: denied below make as everywhere), and never for the model's own `rm -rf` after make in
 * the same run (asked; no approver: denied). Real daemon, real gate-sh, real sandbox; each denial beside the
 * same script running without the rule.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { realworkDaemon } from '../realwork/helpers.js';
import { auditRecords } from './helpers.js';

after(killAll);

const RM_FORBIDDEN = 'prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")';
/** each recipe line a command make runs itself (no shell): `one` teaches the daemon rm and sh below make;
 * `two`, in the next run, asks for sh first, and its rm comes with that answer */
const MAKEFILE = 'one:\n\trm -rf a\n\tsh -c true\n\texpr 1 + 1\ntwo:\n\tsh -c true\n\trm -rf b\n\texpr 2 + 2\n';

const gsh = (d: DaemonProc, script: string) => run(GATE_SH, ['-lc', script], { env: d.env, cwd: d.ws, timeoutMs: 60_000 });

/** The exec records of rm with this operand: [reused, action]. */
const rmOf = (d: DaemonProc, dir: string) =>
  auditRecords(d)
    .filter((r) => r.kind === 'exec' && /\/rm$/.test(r.argv?.[0] ?? '') && r.argv?.at(-1) === dir)
    .map((r) => [r.reused === true, r.action ?? r.detail]);

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`${mode}: below a new make, rm comes with sh's scoped answer (reused on its first exec there); not once a rule names rm, nor for the model's own rm`, { timeout: 120_000 }, async (t) => {
    for (const rules of [[], [RM_FORBIDDEN]]) {
      const d = await realworkDaemon(mode, rules);
      t.after(() => d.close());
      writeFileSync(join(d.ws, 'Makefile'), MAKEFILE);
      for (const f of ['a', 'b', 'c']) mkdirSync(join(d.ws, f));
      const first = await gsh(d, 'make -s one; echo one=$?');
      // (the model's own rm, named at run time by its subprocess: pre-flight does not see it, the exec decides)
      const r = await gsh(d, `make -s two; echo two=$?; python3 -c 'import subprocess; subprocess.run(["rm", "-rf", "c"])'`);
      if (rules.length) {
        assert.match(first.stderr, /gate-sh: denied: rm -rf a: Execution forbidden by policy/);
        assert.match(r.stderr, /gate-sh: denied: rm -rf b: Execution forbidden by policy/);
        assert.match(r.stdout, /^two=2$/m);
        assert.ok(existsSync(join(d.ws, 'b')));
        assert.deepEqual(rmOf(d, 'b').map(([reused, action]) => [reused, String(action).split('(')[0]]), [[false, 'Deny']]);
      } else {
        assert.match(first.stdout, /^one=0$/m, first.stderr);
        assert.match(r.stdout, /^two=0$/m, r.stderr);
        assert.equal(existsSync(join(d.ws, 'b')), false);
        // its first exec in the second run, below the second make: answered by the supervisor
        assert.deepEqual(rmOf(d, 'b'), [[true, 'Run']]);
        // and an answer that holds for any argv anywhere in the run (expr) came with sh's too, recorded as its own
        const expr = auditRecords(d).filter((x) => x.kind === 'exec' && /\/expr$/.test(x.argv?.[0] ?? '') && x.argv?.[1] === '2');
        assert.deepEqual(
          expr.map((x) => [x.reused === true, x.source]),
          [[true, 'heuristic:sandbox']],
        );
      }
      // the model's own rm -rf after make, in the same run: asked, and without an approver not run
      assert.match(r.stderr, rules.length ? /gate-sh: denied: rm -rf c: Execution forbidden/ : /gate-sh: denied: rm -rf c: approval needed/, r.stderr);
      assert.ok(existsSync(join(d.ws, 'c')));
      const own = rmOf(d, 'c');
      assert.ok(own.length >= 1 && own.every(([reused, action]) => !reused && action !== 'Run'), JSON.stringify(own));
    }
  });
}
