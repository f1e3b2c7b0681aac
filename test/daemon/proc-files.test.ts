/**
 * The daemon's kept /proc descriptors (src/daemon/proc-read.ts, ProcFiles; kept by AncestryReader in
 * src/daemon/provenance.ts) cannot be fooled: a process that execs in place, one that rewrites its own command
 * line, and a pid taken by another process after the first is gone each read as a read by path reads them, the
 * reading after the change, never the kept one before it. Real processes (bash, perl, sleep); the pid reuse
 * runs in a user and pid namespace of its own (unshare), where ns_last_pid hands the dead process's pid to
 * the next one. Test only.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AncestryReader } from '../../src/daemon/provenance.js';
import { waitFor } from '../helpers/daemon.js';

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** argv as AncestryReader parses /proc/<pid>/cmdline */
function argvByPath(pid: number): string[] {
  const argv = cmdline(pid).split('\0');
  if (argv.length > 0 && argv[argv.length - 1] === '') argv.pop();
  return argv;
}

/** A child that waits on its stdin to go on, killed when the test ends, once its command line starts with ready. */
async function waiting(t: TestContext, argv: string[], ready: string): Promise<ChildProcess> {
  const p = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'ignore', 'ignore'] });
  t.after(() => p.kill('SIGKILL'));
  await waitFor(() => cmdline(p.pid!).startsWith(ready) || undefined, ready);
  return p;
}

/** whether this process holds a descriptor of /proc/<pid>/<file> (the kept reading is in use) */
function holds(pid: number, file: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === `/proc/${pid}/${file}`;
    } catch {
      return false;
    }
  });
}

test('a process that execs in place reads as its new image, not as the kept one', async (t) => {
  const p = await waiting(t, ['bash', '-c', 'read -r x; exec /bin/sleep 60'], 'bash\0');
  const pid = p.pid!;
  const reader = new AncestryReader();
  const before = reader.read(pid, undefined)!.chain[0];
  assert.deepEqual(before.argv, ['bash', '-c', 'read -r x; exec /bin/sleep 60']);
  assert.match(before.exe, /\/bash$/);
  assert.ok(holds(pid, 'stat') && holds(pid, 'cmdline'), 'its files are kept open');

  p.stdin!.write('\n');
  await waitFor(() => cmdline(pid).startsWith('/bin/sleep\0') || undefined, 'the exec of sleep');
  const after = reader.read(pid, undefined)!.chain[0];
  assert.deepEqual(after.argv, ['/bin/sleep', '60']);
  assert.match(after.exe, /\/sleep$/);
  assert.deepEqual(after.id, before.id, 'the same process (pid, start time, parent)');
  assert.ok(holds(pid, 'stat') && holds(pid, 'cmdline'), 'read through the kept descriptors');
});

test('a process that rewrites its command line reads as rewritten, not as the kept reading', async (t) => {
  const p = await waiting(t, ['perl', '-e', '$0 = "make all"; my $x = <STDIN>; $0 = "bash -c rm"; sleep 60'], 'make all');
  const pid = p.pid!;
  const reader = new AncestryReader();
  const before = reader.read(pid, undefined)!.chain[0];
  assert.deepEqual(before.argv, argvByPath(pid));
  assert.equal(before.argv[0], 'make all');
  assert.ok(holds(pid, 'cmdline'));

  p.stdin!.write('\n');
  await waitFor(() => cmdline(pid).startsWith('bash -c rm') || undefined, 'the rewritten command line');
  const after = reader.read(pid, undefined)!.chain[0];
  assert.equal(after.argv[0], 'bash -c rm');
  assert.deepEqual(after.argv, argvByPath(pid));
  assert.ok(holds(pid, 'cmdline'), 'read through the kept descriptor');
});

test('a pid another process took after the first is gone reads as that other process', (t) => {
  // a pid namespace of its own: ns_last_pid hands the gone process's pid to the next one started
  const probe = spawnSync('unshare', ['-Urpf', '--mount-proc', 'true']);
  if (probe.status !== 0) {
    t.skip('no user and pid namespaces here (unshare -Urpf)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'g-procfiles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const module = fileURLToPath(new URL('../../src/daemon/proc-read.js', import.meta.url));
  const script = `
    import { spawn } from 'node:child_process';
    import { readFileSync, writeFileSync } from 'node:fs';
    const { ProcFiles } = await import(${JSON.stringify(module)});
    const files = new ProcFiles();
    const started = (argv) => new Promise((ok) => { const c = spawn(argv[0], argv.slice(1), { stdio: 'ignore' }); c.on('spawn', () => ok(c)); });
    const until = async (f) => { for (;;) { const v = f(); if (v) return v; await new Promise((r) => setImmediate(r)); } };
    const text = (pid) => { try { return readFileSync('/proc/' + pid + '/cmdline', 'utf8'); } catch { return ''; } };
    const first = await started(['/bin/sleep', '61']);
    await until(() => text(first.pid).startsWith('/bin/sleep'));
    const one = files.read(first.pid, 'cmdline');
    const startOne = files.read(first.pid, 'stat');
    first.kill('SIGKILL');
    await new Promise((r) => first.on('exit', r));
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(first.pid - 1));
    const second = await started(['/bin/sleep', '62']);
    await until(() => text(second.pid).startsWith('/bin/sleep'));
    const two = files.read(second.pid, 'cmdline');
    const startTwo = files.read(second.pid, 'stat');
    second.kill('SIGKILL');
    console.log(JSON.stringify({ same: first.pid === second.pid, one, two, byPath: text(second.pid) === '' ? null : 'alive', startOne, startTwo }));
  `;
  const r = spawnSync('unshare', ['-Urpf', '--mount-proc', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.equal(out.same, true, 'the second process got the first one\'s pid');
  assert.equal(out.one, '/bin/sleep\x0061\x00');
  assert.equal(out.two, '/bin/sleep\x0062\x00', 'the new process\'s command line, not the kept one');
});
