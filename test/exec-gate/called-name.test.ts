/**
 * A program started under another name (`exec -a NAME`, as Claude Code's shell snapshot runs its own binary
 * as `bfs` for find and `ugrep` for grep) is decided under that name too, and as the command the name stands
 * for: a forbidden rule on find, grep or rm holds when the exec's argv[0] says so, whatever the file is.
 * The names are built at run time so that pre-flight cannot read them and the exec gate decides. Real
 * daemon, gate-sh, bash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateSh, execGateOptions } from './helpers.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

/** argv[0] built at run time, so only the exec gate sees it */
const startedAs = (name: string) => `n=$(printf %s '${name.slice(0, 1)}'); (exec -a "\${n}${name.slice(1)}" /bin/echo "ran as ${name}")`;

const FORBID = ['find', 'grep', 'rm'].map((p) => `prefix_rule(pattern=["${p}"], decision="forbidden")`);

test('exec -a: a forbidden rule on the name called (rm) or on what it stands for (bfs → find, ugrep → grep) denies the exec', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: FORBID }));
  t.after(async () => (killAll(), rig.close()));
  for (const [name, rule] of [['ugrep', 'grep'], ['bfs', 'find'], ['rm', 'rm'], ['/usr/bin/rm', 'rm']]) {
    const r = await gateSh(rig, startedAs(name));
    assert.equal(r.stdout, '', `${name} ran: ${r.stderr}`);
    // the exec gate's denial (pre-flight cannot read the name)
    assert.match(r.stderr, /gate-sh: denied: .*Execution forbidden by policy/, `${name} (${rule}): ${r.stderr}`);
  }
  // names no rule speaks of, and a login shell's '-bash', run as before
  for (const name of ['lister', '-bash']) {
    const r = await gateSh(rig, startedAs(name));
    assert.equal(r.stdout, `ran as ${name}\n`, r.stderr);
    assert.equal(r.code, 0);
  }
});

test('exec -a: the same execs run when no rule forbids find, grep or rm', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["find"], decision="allow")'] }));
  t.after(async () => (killAll(), rig.close()));
  for (const name of ['ugrep', 'bfs', 'rm', '/usr/bin/rm']) {
    const r = await gateSh(rig, startedAs(name));
    assert.equal(r.stdout, `ran as ${name}\n`, `${name}: ${r.stderr}`);
    assert.equal(r.code, 0);
  }
});
