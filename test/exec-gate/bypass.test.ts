/**
 * Invariant 1 at exec time: with a `forbidden` rm rule none of the 13 spellings removes its target,
 * however the script was approved; with rm allowed each one does (so the test can fail). Real daemon, real
 * approver, real gate-sh, bash, python3, make, find, xargs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fourAtATime, gateSh, execGateOptions } from './helpers.js';
import { type DaemonProc, killAll, startDaemon } from '../helpers/daemon.js';

/** [name, script]: each removes the file named by $T */
export const ATTEMPTS: [string, string][] = [
  ['python3 os.system', `python3 -c 'import os,sys; os.system("rm " + sys.argv[1])' "$T"`],
  ['find -exec rm', `find . -name "$T" -exec rm {} \\;`],
  ['xargs rm', `echo "$T" | xargs rm`],
  ['env rm', `env rm "$T"`],
  ['env -i PATH=/bin rm', `env -i PATH=/bin rm "$T"`],
  ['timeout 5 rm', `timeout 5 rm "$T"`],
  ['nice rm', `nice rm "$T"`],
  ['nohup rm &', `nohup rm "$T" >/dev/null & wait`],
  ['stdbuf -oL rm', `stdbuf -oL rm "$T"`],
  ['bash -c "bash -c rm"', `bash -c "bash -c 'rm $T'"`],
  ['Makefile recipe', `printf 'all:\\n\\trm %s\\n' "$T" > "mk-$T" && make -s -f "mk-$T"`],
  ['/bin/rm', `/bin/rm "$T"`],
  ['x=rm; $x', `x=rm; $x "$T"`],
];

/** Beyond the list: paths the hooks do not see, closed by the library's constructor. */
export const CONSTRUCTOR_ATTEMPTS: [string, string][] = [
  // a raw execve syscall from a dynamically linked program that keeps its environment
  [
    'raw execve syscall',
    `python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None); a=(ctypes.c_char_p*3)(b"/bin/rm", sys.argv[1].encode(), None); e=(ctypes.c_char_p*(len(os.environ)+1))(*[("%s=%s"%kv).encode() for kv in os.environ.items()], None); l.syscall(59, b"/bin/rm", a, e); print("execve failed")' "$T"`,
  ],
  ['posix_spawn from python', `python3 -c 'import os,sys; pid=os.posix_spawn("/bin/rm", ["rm", sys.argv[1]], os.environ); os.waitpid(pid, 0)' "$T"`],
  ['popen from python', `python3 -c 'import os,sys; print(os.popen("rm " + sys.argv[1]).read())' "$T"`],
  // the program under another name: a symlink is resolved (a copy or hard link is not covered: README)
  ['symlink to rm', `ln -sf /bin/rm "./alias-$T" && "./alias-$T" "$T"`],
  // exec by descriptor: python's os.execve(fd, ...) is fexecve; execveat through libc (dirfd + name)
  ['fexecve from python', `python3 -c 'import os,sys; fd=os.open("/bin/rm", os.O_RDONLY); os.execve(fd, ["rm", sys.argv[1]], dict(os.environ))' "$T"`],
  [
    'execveat from libc',
    `python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None); d=os.open("/bin", os.O_RDONLY|os.O_DIRECTORY); a=(ctypes.c_char_p*3)(b"rm", sys.argv[1].encode(), None); e=(ctypes.c_char_p*(len(os.environ)+1))(*[("%s=%s"%kv).encode() for kv in os.environ.items()], None); l.execveat(d, b"rm", a, e, 0); print("execveat failed")' "$T"`,
  ],
];

/** Literal: the script as given to gate-sh. Hidden: the same lines in a file run by `bash ./file`, so
 * pre-flight never sees the rm and only the exec gate can stop it. */
const ALL = [...ATTEMPTS, ...CONSTRUCTOR_ATTEMPTS];

async function attempt(rig: DaemonProc, i: number, hidden: boolean): Promise<{ removed: boolean; stderr: string; code: number | null }> {
  const [, script] = ALL[i];
  const target = `target${i}${hidden ? 'h' : ''}`;
  writeFileSync(join(rig.ws, target), 'x');
  const body = `T=${target}; ${script}`;
  let r;
  if (hidden) {
    writeFileSync(join(rig.ws, `attempt${i}.sh`), body + '\n');
    r = await gateSh(rig, `bash ./attempt${i}.sh`);
  } else r = await gateSh(rig, body);
  return { removed: !existsSync(join(rig.ws, target)), stderr: r.stderr, code: r.code };
}

/** All attempts, four at a time (a datagram queue holds 10 messages; this is a test, not a load test). */
async function runAll(rig: DaemonProc) {
  return fourAtATime(ALL.flatMap((_, i) => [() => attempt(rig, i, false), () => attempt(rig, i, true)]));
}

test('a forbidden rm rule holds at every depth: none of the 13 spellings (nor a raw syscall, posix_spawn, popen, fexecve, execveat, a symlink) removes its target', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="forbidden")'], autoApprove: true }));
  t.after(async () => (killAll(), rig.close()));
  const results = await runAll(rig);
  results.forEach((r, k) => {
    const name = `${ALL[k >> 1][0]}${k & 1 ? ' (hidden in a file)' : ''}`;
    assert.equal(r.removed, false, `${name} removed its target (exit ${r.code}): ${r.stderr}`);
    assert.match(r.stderr, /gate-sh: denied: .*(rm|alias-target)/, `${name}: no denial message: ${r.stderr}`);
    // hidden from pre-flight: the exec gate (or the nested shell's own pre-flight) said no
    if (k & 1) assert.match(r.stderr, /Execution forbidden by policy|policy forbids/, `${name}: not denied at exec time: ${r.stderr}`);
  });
  // forbidden is never asked about: no prompt ever showed an rm
  const asked = rig.prompts.map((p) => JSON.stringify(p.command ?? p.argv ?? p)).filter((c) => /"(\/usr\/bin\/|\/bin\/)?rm"/.test(c));
  assert.deepEqual(asked, []);
});

test('with rm allowed, each of the 13 spellings removes its target (the gate does not break them)', async (t) => {
  const rig = await startDaemon(execGateOptions({ rules: ['prefix_rule(pattern=["rm"], decision="allow")'], autoApprove: true }));
  t.after(async () => (killAll(), rig.close()));
  const results = await runAll(rig);
  results.forEach((r, k) => {
    const name = `${ALL[k >> 1][0]}${k & 1 ? ' (hidden in a file)' : ''}`;
    assert.equal(r.removed, true, `${name} did not remove its target (exit ${r.code}): ${r.stderr}`);
  });
});
