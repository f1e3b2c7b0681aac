/**
 * The native addon's spawn (src/exec/native.ts; gate mcp's in-process calls start their plans with it): the
 * child gets exactly the descriptors it is given (stdin /dev/null, nothing else of ours), a session of its
 * own, every signal at its default and none blocked, the working folder and environment given; its end is
 * reported as Node reports it (code, or the signal); a program that cannot run throws and nothing starts.
 * Real processes, no mocks. Test only; no trust boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateNative } from '../../src/exec/native.js';

interface Ended {
  code: number | null;
  signal: number;
  out: string;
}

/** Spawn sh -c script with stdout into a file and extra descriptors; wait for its end. */
function run(script: string, o: { cwd?: string; env?: string[]; extra?: number[] } = {}): Promise<Ended & { pid: number }> {
  const g = gateNative();
  const dir = mkdtempSync(join(tmpdir(), 'g-spawn-'));
  const outFile = join(dir, 'out');
  const out = openSync(outFile, 'w');
  return new Promise((resolve, reject) => {
    try {
      const pid = (g.spawn as NonNullable<typeof g.spawn>)(
        '/bin/sh',
        ['/bin/sh', '-c', script],
        o.env ?? ['PATH=/usr/bin:/bin'],
        o.cwd ?? '/',
        [-1, out, out, ...(o.extra ?? [])],
        (code, signal) => {
          resolve({ pid, code, signal, out: readFileSync(outFile, 'utf8') });
          rmSync(dir, { recursive: true, force: true });
        },
      );
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      reject(e);
    } finally {
      closeSync(out);
    }
  });
}

const available = gateNative().spawnAvailable() && typeof gateNative().spawn === 'function';

/** glibc's version at run time ("2.36"), or null off glibc. */
function glibc(): number[] | null {
  const v = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
  return v ? v.split('.').map(Number) : null;
}

// The two tests below are skipped only where the addon cannot have its spawn; this one makes sure a machine
// that can (glibc 2.34 or later, for posix_spawn's pidfd support; Linux 5.3 or later, for pidfd_open) has it,
// so a build that lost it does not hide behind the skip.
test('native spawn: built and usable wherever glibc has posix_spawn with pidfds (2.34 or later)', () => {
  const v = glibc();
  const [major, minor] = release().split('.').map(Number);
  const pidfds = major > 5 || (major === 5 && minor >= 3); // pidfd_open: Linux 5.3
  const capable = pidfds && v !== null && (v[0] > 2 || (v[0] === 2 && v[1] >= 34));
  if (capable) assert.ok(available, `glibc ${v!.join('.')} and Linux ${release()} here, yet the addon has no spawn (gate mcp would fall back to Node's)`);
  else assert.equal(available, false, 'spawn reported available without glibc 2.34 and pidfds');
});

test('native spawn: exit status, signal, cwd, environment, session, signals, descriptors', { skip: !available && 'no posix_spawn with pidfds here' }, async () => {
  const r1 = await run('exit 3');
  assert.deepEqual([r1.code, r1.signal], [3, 0]);
  const r2 = await run('kill -TERM $$');
  assert.deepEqual([r2.code, r2.signal], [null, 15]);

  const cwd = realpathSync(tmpdir());
  const r3 = await run('pwd; echo "$X"; cat; echo "in=$?"', { cwd, env: ['PATH=/usr/bin:/bin', 'X=a b'] });
  assert.equal(r3.out, `${cwd}\na b\nin=0\n`); // stdin is /dev/null: cat reads nothing

  // a session of its own (setsid: its pid is its session id), no signal blocked or ignored even though
  // this process ignores SIGPIPE (Node does)
  const r4 = await run('ps -o sid= -p $$; exec grep -E "^(SigBlk|SigIgn):" /proc/self/status');
  const [sid, blk, ign] = r4.out.trim().split('\n').map((l) => l.trim());
  assert.equal(Number(sid), r4.pid);
  assert.equal(blk, 'SigBlk:\t0000000000000000');
  assert.equal(ign, 'SigIgn:\t0000000000000000');

  // descriptors: 3 and 5 as given (a pipe's write end, a file), 4 closed, nothing else of ours open
  const [pr, pw] = gateNative().pipe();
  const dir = mkdtempSync(join(tmpdir(), 'g-spawn-'));
  const f = openSync(join(dir, 'f'), 'w');
  try {
    // (dash moves a saved descriptor to 10 or above while it redirects: 3-9 are the ones to look at)
    const open = 'for n in 3 4 5 6 7 8 9; do if { true >&$n; } 2>/dev/null; then printf "%s " $n; fi; done';
    const r5 = await run(`echo piped >&3; echo filed >&5; ${open}`, { extra: [pw, -1, f] });
    assert.equal(r5.out, '3 5 ');
    closeSync(pw);
    assert.equal(readFileSync(`/proc/self/fd/${pr}`, 'utf8'), 'piped\n');
    assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'filed\n');
  } finally {
    closeSync(pr);
    closeSync(f);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('native spawn: a program that cannot run throws, as Node says it, and nothing starts', { skip: !available && 'no posix_spawn with pidfds here' }, () => {
  const g = gateNative();
  const spawn = g.spawn as NonNullable<typeof g.spawn>;
  assert.throws(() => spawn('/nonexistent/prog', ['x'], [], '/', [-1, -1, -1], () => assert.fail('no child')), /spawn \/nonexistent\/prog ENOENT/);
  assert.throws(() => spawn('/bin/sh', ['sh'], [], '/nonexistent-dir', [-1, -1, -1], () => assert.fail('no child')), /spawn \/bin\/sh ENOENT/);
  assert.throws(() => spawn('sh', ['sh'], [], '/', [-1, -1, -1], () => assert.fail('no child')), /bad arguments/);
});
