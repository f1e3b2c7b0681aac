/**
 * Issue 30, finding 5: a program is known by what it is, robustly (src/daemon/program-identity.ts): ELF
 * build-id and the bytes the kernel loads (PT_LOAD), not size + SHA-256 of the file. The attack exactly as
 * reported: `cp /bin/rm r; printf '\0' >> r; ./r victim` ran with rm forbidden (an exact copy was denied).
 * Also: a copy with bytes appended after a section header rewrite (objcopy), and one with its build-id
 * note removed (known by its loaded bytes is then impossible: they changed; known by the rest). Each in
 * workspace-write and danger-full-access, rm forbidden (denied, nothing removed) and rm allowed (it runs).
 * Real daemon, real gate-sh, real bubblewrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execGateOptions, gateSh } from '../exec-gate/helpers.js';
import { killAll, startDaemon, type DaemonProc } from '../helpers/daemon.js';

/** [name, script making ./r from /bin/rm]: each then runs `./r victim`. */
const COPIES: [string, string][] = [
  ['padded with a NUL byte (as reported)', `cp /bin/rm r; printf '\\0' >> r`],
  ['padded with 4 KiB', `cp /bin/rm r; head -c 4096 /dev/urandom >> r`],
  ['an exact copy', 'cp /bin/rm r'],
  ['its .comment section and symbols stripped', 'strip --strip-all -R .comment -o r /bin/rm'],
  ['its build-id note removed', 'objcopy --remove-section=.note.gnu.build-id /bin/rm r'],
];

let made = 0;

async function attempt(rig: DaemonProc, make: string) {
  writeFileSync(join(rig.ws, 'victim'), 'x');
  // the copy is made by the run itself, as the attack did, in a folder of its own (no rm of the last one)
  const dir = `c${++made}`;
  const r = await gateSh(rig, `mkdir ${dir} && cd ${dir} && ${make}; chmod +x r; ./r ../victim; echo "status=$?"`, { timeoutMs: 60_000 });
  return { removed: !existsSync(join(rig.ws, 'victim')), ...r };
}

for (const mode of ['workspace-write', 'danger-full-access'] as const) {
  test(`identity, ${mode}: a modified copy of rm is rm: denied when forbidden, runs when allowed`, async (t) => {
    t.after(killAll);
    const rules = ['prefix_rule(pattern=["rm"], decision="forbidden")'];
    const forbid = await startDaemon(execGateOptions({ rules, env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => forbid.close());
    for (const [name, make] of COPIES) {
      const r = await attempt(forbid, make);
      assert.equal(r.removed, false, `${name}: the copy of rm ran (exit ${r.code}): ${r.stderr}${r.stdout}`);
      assert.match(r.stderr, /gate-sh: denied: [^\n]*r \.\.\/victim: Execution forbidden by policy/, `${name}: ${r.stderr}`);
    }
    const allow = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="allow")'], env: { GATE_SANDBOX_MODE: mode } }));
    t.after(() => allow.close());
    for (const [name, make] of COPIES) {
      const r = await attempt(allow, make);
      assert.doesNotMatch(r.stderr, /gate-sh: (denied|exec gate)/, `${name}: ${r.stderr}`);
      assert.equal(r.removed, true, `${name}: did not run (exit ${r.code}): ${r.stderr}${r.stdout}`);
    }
  });
}
