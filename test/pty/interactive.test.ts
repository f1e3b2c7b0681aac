/**
 * The interactive gated shell on a real terminal: node-pty plays the user's terminal around `gate-sh` (no
 * script, a TTY), with a real daemon, real sockets and one long-lived bash behind the prompt.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { Term } from './term.js';
import { type DaemonProc, killAll, startDaemon, waitFor } from '../helpers/daemon.js';

const FULL = { GATE_SANDBOX_MODE: 'danger-full-access', GATE_NO_AUTOSTART: '1' };
const PROMPT = /gate-sh:[^\r\n]*\$ /g;
// whatever a failed test left behind (daemons, consoles) must not keep this file alive
after(() => killAll());

/** A daemon (with rule lines, approval policy) and gate-sh on a terminal in its temp home. */
async function shell(
  o: { rules?: string; policy?: string; rows?: number; sandbox?: string } = {},
): Promise<{ d: DaemonProc; t: Term; line(s: string | Buffer, ms?: number): Promise<string>; done(): Promise<void> }> {
  // the rules are in place before the daemon starts: it reads them at start, no reload to wait for
  const d = await startDaemon({
    env: { ...FULL, ...(o.sandbox ? { GATE_SANDBOX_MODE: o.sandbox } : {}) },
    args: o.policy ? ['--approval-policy', o.policy] : [],
    ...(o.rules ? { rules: o.rules } : {}),
  });
  const t = new Term(GATE_SH, [], { env: d.te.env, cwd: d.te.dir, rows: o.rows });
  try {
    await t.waitFor(PROMPT, 15_000);
  } catch (e) {
    // no prompt: fail this test, but leave nothing running that would keep the file (and CI) waiting
    t.pty.kill('SIGKILL');
    await d.stop();
    d.te.cleanup();
    throw e;
  }
  /** types a line; resolves with what was printed up to the next prompt */
  const line = async (s: string | Buffer, ms = 15_000) => {
    const from = t.output().length;
    t.write(Buffer.concat([Buffer.from(s), Buffer.from('\r')]));
    const echoEnd = (await t.waitFor('\r\n', ms, from)) + 2;
    const at = await t.waitFor(PROMPT, ms, echoEnd);
    return t.output().subarray(echoEnd, at).toString('latin1').replace(/\x1b\[1G\x1b\[0J$/, '');
  };
  const done = async () => {
    t.pty.kill('SIGKILL');
    await d.stop();
    d.te.cleanup();
  };
  return { d, t, line, done };
}

test('state is kept across lines: cd, exports, functions, aliases; read with a prompt; exit N ends with N', { timeout: 60_000 }, async () => {
  const s = await shell();
  try {
    assert.equal(await s.line('mkdir -p sub && cd sub && export FOO=bar && f() { echo "fun $1"; } && alias ll="echo aliased"'), '');
    assert.equal(await s.line(`pwd; echo "$FOO"; f x; ll; printenv FOO`), `${s.d.te.dir}/sub\r\nbar\r\nfun x\r\naliased\r\nbar\r\n`);
    assert.match(s.t.text(), /gate-sh:[^\r\n]*\/sub\$ (\x1b\[\d+G)?$/, 'the prompt follows cd');
    const from = s.t.output().length;
    s.t.write('read -r -p "name? " n; echo "hi [$n]"\r');
    await s.t.waitFor('name? ', 10_000, from);
    s.t.write('bob\r');
    // its line end too: line() below finds its own echo by the first line end after the point it starts from
    await s.t.waitFor('hi [bob]\r\n', 10_000, from);
    // typed as the command ends, before the next prompt: the prompt gets it, as bash's readline would. (On a
    // busy machine the terminal may echo it before the prompt is drawn and readline again after: so the answer
    // is looked for on a line of its own after what was typed, not between the first line end and a prompt.)
    const typed = s.t.output().length;
    s.t.write('echo "$n"\r');
    await s.t.waitFor(/\r\nbob\r\n/, 10_000, typed).catch(() => assert.fail('read set the variable in the session'));
    await s.t.waitFor(PROMPT, 10_000, s.t.output().lastIndexOf('bob\r\n') + 5);
    s.t.write('exit 3\r');
    assert.equal((await s.t.exit()).exitCode, 3);
  } finally {
    await s.done();
  }
});

test('typeahead: keys no command read reach the next prompts, in order; a command that reads takes its share', { timeout: 60_000 }, async () => {
  const s = await shell();
  try {
    let from = s.t.output().length;
    // two lines and half a third typed while a sleep runs: both lines run, the half line waits at the prompt
    s.t.write('sleep 0.4\recho "one $((1+1))"\recho "two $((1+1))"\recho "th');
    await s.t.waitFor('two 2\r\n', 10_000, from);
    await s.t.waitFor(/gate-sh:[^\r\n]*\$ (\x1b\[\d+G)?echo "th$/, 10_000, from);
    s.t.write('ree $((1+2))"\r');
    await s.t.waitFor('three 3\r\n', 10_000, from);
    const out = s.t.output().subarray(from).toString('latin1');
    assert.ok(out.indexOf('one 2\r\n') < out.indexOf('two 2\r\n'), 'in the order typed');
    assert.equal(out.split('two $((1+1))').length - 1, 2, 'each typed-ahead line shown twice at most: echoed as typed, then at its prompt');
    // a reading command takes the first line typed ahead; the rest is the next prompt's
    from = s.t.output().length;
    s.t.write('sleep 0.3; read -r x; echo "got [$x]"\rfirst\recho "after [$x]"\r');
    const after = await s.t.waitFor('after [first]', 10_000, from);
    // (and the prompt after it: line() below reads from the end of what was printed so far)
    await s.t.waitFor(PROMPT, 10_000, after);
    assert.match(s.t.output().subarray(from).toString('latin1'), /got \[first\][^]*after \[first\]/);
    assert.equal(await s.line('echo "$?"'), '0\r\n');
    // a pasted block (an empty line in it) runs line by line, each line once
    from = s.t.output().length;
    s.t.write('\recho "a $((1))"\recho "b $((2))"\r');
    await s.t.waitFor('b 2\r\n', 10_000, from);
    assert.match(s.t.output().subarray(from).toString('latin1'), /a 1\r\n[^]*b 2\r\n/);
  } finally {
    await s.done();
  }
});

test('the session bash runs in the turn sandbox (workspace-write): the workspace is writable, / is not', { timeout: 60_000 }, async () => {
  const s = await shell({ sandbox: 'workspace-write' });
  try {
    assert.equal(await s.line('echo hi > inside.txt && cat inside.txt && export A=1'), 'hi\r\n');
    assert.match(await s.line('touch /etc/gate-sh-nope; echo "$? $A"'), /Read-only file system\r\n1 1\r\n$/);
    assert.equal(existsSync('/etc/gate-sh-nope'), false);
  } finally {
    await s.done();
  }
});

test('each line is gated: a forbidden command anywhere in the line means nothing runs; the next line works', { timeout: 60_000 }, async () => {
  const s = await shell({ rules: 'prefix_rule(pattern=["rm"], decision="forbidden", justification="no deleting")\n' });
  try {
    writeFileSync(join(s.d.te.dir, 'keep'), 'x');
    const out = await s.line('echo first; rm -f keep');
    assert.match(out, /^gate-sh: denied: rm -f keep: .*no deleting.*\r\n$/);
    assert.ok(existsSync(join(s.d.te.dir, 'keep')));
    assert.equal(await s.line('echo $?'), '126\r\n');
    assert.equal(await s.line('echo fine'), 'fine\r\n');
  } finally {
    await s.done();
  }
});

test('an inline approval on the terminal, answered with a key: a runs it, d denies it', { timeout: 60_000 }, async () => {
  const s = await shell({ policy: 'untrusted' });
  try {
    const from = s.t.output().length;
    s.t.write('touch approved-file\r');
    await s.t.waitFor('answer: ', 10_000, from);
    assert.match(s.t.output().subarray(from).toString(), /command: .*touch approved-file/);
    assert.equal(existsSync(join(s.d.te.dir, 'approved-file')), false, 'nothing runs before the answer');
    s.t.write('a');
    await s.t.waitFor(PROMPT, 10_000, from);
    await waitFor(() => existsSync(join(s.d.te.dir, 'approved-file')), 'approved-file', 1000).catch(() => undefined);
    assert.ok(existsSync(join(s.d.te.dir, 'approved-file')));

    const from2 = s.t.output().length;
    s.t.write('touch denied-file\r');
    await s.t.waitFor('answer: ', 10_000, from2);
    s.t.write('z'); // not an offered answer: ignored
    s.t.write('d');
    await s.t.waitFor(/gate-sh: denied: .*touch denied-file/, 10_000, from2);
    await s.t.waitFor(PROMPT, 10_000, from2);
    assert.equal(existsSync(join(s.d.te.dir, 'denied-file')), false);

    // a later line (the session's bash runs under the first line's run): asked once, not again at exec
    const from3 = s.t.output().length;
    s.t.write('touch later-file\r');
    await s.t.waitFor('answer: ', 10_000, from3);
    s.t.write('a');
    await s.t.waitFor(PROMPT, 10_000, from3);
    await waitFor(() => existsSync(join(s.d.te.dir, 'later-file')), 'later-file', 1000).catch(() => undefined);
    assert.ok(existsSync(join(s.d.te.dir, 'later-file')));
    assert.equal(s.t.output().subarray(from3).toString().split('answer: ').length - 1, 1, 'one question for the line');
  } finally {
    await s.done();
  }
});

test('Ctrl-C stops a sleep and a builtin loop; Ctrl-Z stops a job and returns to the prompt', { timeout: 60_000 }, async () => {
  const s = await shell();
  try {
    await s.line('x=kept');
    let from = s.t.output().length;
    s.t.write('sleep 30.5; echo not-reached\r');
    await waitProc('30.5');
    s.t.write('\x03');
    await s.t.waitFor(PROMPT, 5000, from + 5);
    assert.equal(await s.line('echo "$? $x"'), '130 kept\r\n');
    from = s.t.output().length;
    // the loop's line prints a word first (quoted apart, so the echo of the typed line does not show it): once
    // it is out the builtin loop is running
    s.t.write("echo loop''2; while :; do :; done\r");
    await s.t.waitFor('loop2', 15_000, from);
    s.t.write('\x03');
    await s.t.waitFor(PROMPT, 5000, from + 5);
    from = s.t.output().length;
    s.t.write('sleep 31\r');
    await waitProc('31');
    s.t.write('\x1a');
    await s.t.waitFor(PROMPT, 5000, from + 5);
    assert.match(s.t.output().subarray(from).toString(), /Stopped\s+sleep 31/);
    assert.match(await s.line('jobs'), /Stopped\s+sleep 31/);
    assert.match(await s.line('kill %1; wait; echo killed'), /killed/);
  } finally {
    await s.done();
  }
});

test('resize is seen by stty size; less with a keypress; invalid UTF-8 printed survives', { timeout: 60_000 }, async () => {
  const s = await shell({ rows: 10 });
  try {
    assert.equal(await s.line('stty size'), '10 80\r\n');
    // gate-sh passes a resize on when its SIGWINCH arrives, which nothing outside shows: stty size is asked
    // until it answers the new size (or enough times that it never will)
    const sizeAfter = async (cols: number, rows: number) => {
      let size = '';
      for (let i = 0; i < 20 && size !== `${rows} ${cols}\r\n`; i++) size = await s.line('stty size');
      return size;
    };
    s.t.pty.resize(132, 50);
    assert.equal(await sizeAfter(132, 50), '50 132\r\n');
    s.t.pty.resize(80, 10);
    assert.equal(await sizeAfter(80, 10), '10 80\r\n');
    const from = s.t.output().length;
    s.t.write('seq 1 500 | less\r');
    await s.t.waitFor(/\b9\r?\n/, 10_000, from);
    s.t.write('q');
    await s.t.waitFor(PROMPT, 10_000, from + 5);
    const out = await s.line(`printf 'A\\xff\\xfe\\x80Z\\n'`);
    assert.deepEqual(Buffer.from(out, 'latin1'), Buffer.from([0x41, 0xff, 0xfe, 0x80, 0x5a, 0x0d, 0x0a]));
    // invalid UTF-8 typed at the prompt reaches bash unchanged
    const typed = await s.line(
      Buffer.concat([Buffer.from("printf %s '<"), Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(">' | od -An -tx1")]),
    );
    assert.match(typed, /3c ff c3 28 ed a0 80 3e/);
  } finally {
    await s.done();
  }
});

test('a 1 MB paste into a command of the session arrives intact', { timeout: 60_000 }, async () => {
  const s = await shell();
  try {
    let paste = '';
    for (let i = 0; paste.length < 1 << 20; i++) paste += String(i).padStart(8, '0') + 'y'.repeat(55) + '\n';
    const want = createHash('sha256').update(paste).digest('hex');
    const from = s.t.output().length;
    s.t.write('stty -echo; echo go; sha256sum; stty echo\r');
    await s.t.waitFor('go\r\n', 10_000, from);
    s.t.write(paste);
    s.t.write('\x04');
    await s.t.waitFor(want, 60_000, from);
    await s.t.waitFor(PROMPT, 10_000, from + 5);
  } finally {
    await s.done();
  }
});

test('terminal closed under a running command: the session gets SIGHUP, nothing lingers', { timeout: 60_000 }, async () => {
  const s = await shell();
  const tag = `1000.${process.pid}`;
  const alive = () => pidsWith(tag);
  try {
    s.t.write(`(trap '' HUP; sleep ${tag}) & sleep ${tag}\r`);
    await waitFor(() => alive().length >= 2, 'both sleeps to run', 5000).catch(() => undefined);
    assert.equal(alive().length, 2, s.t.text());
    (s.t.pty as unknown as { destroy(): void }).destroy();
    await waitFor(() => alive().length === 0, 'the session to be reaped', 3000).catch(() => undefined);
    assert.deepEqual(alive(), []);
  } finally {
    for (const p of alive()) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    await s.done();
  }
});

/** live processes with `arg` among their arguments */
function pidsWith(arg: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(e)) continue;
    try {
      const st = readFileSync(`/proc/${e}/stat`, 'latin1');
      if (st[st.lastIndexOf(')') + 2] === 'Z') continue;
      if (readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').slice(1).includes(arg)) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function waitProc(arg: string): Promise<void> {
  await waitFor(() => pidsWith(arg).length > 0, `a process running with ${arg}`, 10_000).catch(() => undefined);
  assert.ok(pidsWith(arg).length > 0, `a process running with ${arg}`);
}
