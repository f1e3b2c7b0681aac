/**
 * The single-command PTY path with the real plan: pre-flight through a real daemon, the turn sandbox
 * (bubblewrap) and the exec gate around bash, hosted in a PTY on a node-pty "terminal".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { Term } from './term.js';
import { startDaemon } from '../helpers/daemon.js';


test('gated PTY run: sandboxed, exec-gated, exit status and large scripts preserved', { timeout: 120_000 }, async () => {
  // the rules are in place before the daemon starts: it reads them at start, no reload to wait for
  const d = await startDaemon({
    env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' },
    rules: 'prefix_rule(pattern=["rm"], decision="forbidden", justification="no deleting")\n',
  });
  try {
    writeFileSync(join(d.te.dir, 'keep'), 'x');
    // on a terminal gate-sh hosts the script in a PTY by itself; --pty says so explicitly
    let n = 0;
    const run = async (script: string, flags: string[] = []) => {
      const file = join(d.te.dir, `script${++n}.sh`);
      writeFileSync(file, script);
      const t = new Term(GATE_SH, [...flags, file], { env: d.te.env, cwd: d.te.dir });
      const e = await t.exit(30_000);
      return { status: e.exitCode, out: t.text() };
    };
    const a = await run('tty >/dev/null && echo "on a tty"; echo hi > w.txt; cat w.txt; exit 4');
    assert.deepEqual(a, { status: 4, out: 'on a tty\r\nhi\r\n' });
    const b = await run('touch /etc/gate-sh-nope', ['--pty']);
    assert.equal(b.status, 1);
    assert.match(b.out, /Read-only file system/);
    // pre-flight cannot see through $f: the opaque script runs in the turn sandbox (issue 29: no prompt);
    // the exec gate still stops rm
    const c = await run('echo start; f=rm; $f -f keep; echo "after $?"');
    assert.match(c.out, /^start\r\n.*gate-sh: denied: .*rm.*\r\nafter 126\r\n$/s, 'the exec gate inside the PTY denies what pre-flight could not see');
    assert.ok(existsSync(join(d.te.dir, 'keep')));
    const big = `x='${'y'.repeat(200_000)}'; echo "\${#x} $0"`;
    const e = await run(big);
    assert.deepEqual(e, { status: 0, out: `200000 ${join(d.te.dir, `script${n}.sh`)}\r\n` });
  } finally {
    await d.stop();
    d.te.cleanup();
  }
});
