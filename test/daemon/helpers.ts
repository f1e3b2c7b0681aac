/**
 * Real approval consoles, `gate` runs and request clients for the daemon tests (the daemon itself is
 * test/helpers/daemon.ts's). Test-only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, ROOT } from '../helpers/env.js';
import { track, waitFor } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';
import type { GatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { request, type Outgoing } from '../../src/transport/client.js';
import type { Reply } from '../../src/protocol/messages.js';

/**
 * Once the daemon's idle-time warm-up (its parsers compiled on throw-away scripts, from 10 s after start)
 * is done: benchmarks measure a steady daemon, whose warm-up CPU is neither counted nor competing.
 */
export async function warmedUp(paths: GatePaths): Promise<{ done: number; of: number }> {
  return waitFor(
    async () => {
      await new Promise((r) => setTimeout(r, 500)); // a ping is a request too (it defers the warm-up): poll slowly
      const w = ((await pingDaemon(paths)) as { warm_up?: { done: number; of: number } } | undefined)?.warm_up;
      return w && w.done === w.of ? w : undefined;
    },
    'the daemon warm-up',
    120_000,
  );
}

export function preflight(paths: GatePaths, script: string, extra: Partial<Outgoing> = {}): Promise<Reply & Record<string, any>> {
  return request(
    paths,
    { type: 'preflight', shell: 'bash', flag: '-c', script, cwd: '/tmp', pid: process.pid, sandbox_permissions: 'use_default', ...extra },
    { timeoutMs: 5000 },
  ) as Promise<Reply & Record<string, any>>;
}

/** A real `gate approve --json` process: events in `events`, answers written as JSON lines. */
export interface Console {
  child: ChildProcess;
  events: Record<string, any>[];
  next(type: string, pred?: (e: Record<string, any>) => boolean): Promise<Record<string, any>>;
  answer(approval_id: string, decision: unknown): void;
  close(): Promise<void>;
}

export async function approveConsole(env: Record<string, string>, name: string): Promise<Console> {
  const child = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', name], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  const events: Record<string, any>[] = [];
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  createInterface({ input: child.stdout! }).on('line', (l) => events.push(JSON.parse(l)));
  const used = new Set<number>();
  const c: Console = {
    child,
    events,
    async next(type, pred = () => true) {
      return waitFor(() => {
        for (let i = 0; i < events.length; i++)
          if (!used.has(i) && events[i].type === type && pred(events[i])) {
            used.add(i);
            return events[i];
          }
        return undefined;
      }, `a '${type}' event on console ${name} (stderr: ${err})`);
    },
    answer(approval_id, decision) {
      child.stdin!.write(JSON.stringify({ approval_id, decision }) + '\n');
    },
    async close() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    },
  };
  await c.next('attached');
  return c;
}

/** `gate <args>`; `wrap` runs it under another program (e.g. `unshare --pid --fork --mount-proc`, bwrap). */
export async function runGate(
  env: Record<string, string>,
  args: string[],
  input?: string,
  wrap: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // waits for the pipes to be read to their end (see run), not only for the exit
  const argv = [...wrap, process.execPath, GATE, ...args];
  const r = await run(argv[0], argv.slice(1), { env, input, timeoutMs: 120_000 });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** node-pty, for the tests that need a real terminal (the console and the foreground daemon). */
export interface Pty {
  onData(cb: (d: string) => void): void;
  write(d: string): void;
  kill(sig?: string): void;
  onExit(cb: (e: { exitCode: number }) => void): void;
}
export const pty = createRequire(import.meta.url)('node-pty') as { spawn(file: string, args: string[], o: Record<string, unknown>): Pty };

/**
 * A seccomp program for bwrap --seccomp: connect, bind, listen, sendto, sendmsg fail with EPERM, as under
 * Codex's own Linux sandbox (its filter denies these for every socket, unix ones included).
 */
export function denySocketsFilter(): Buffer {
  const arch = process.arch === 'arm64' ? { audit: 0xc00000b7, nrs: [203, 200, 201, 206, 211] } : { audit: 0xc000003e, nrs: [42, 49, 50, 44, 46] };
  const k = arch.nrs.length;
  const ins: [number, number, number, number][] = [
    [0x20, 0, 0, 4], // ld arch
    [0x15, 0, k + 1, arch.audit], // another arch: allow (the test then fails: the command ran)
    [0x20, 0, 0, 0], // ld nr
    ...arch.nrs.map((nr, i): [number, number, number, number] => [0x15, k - i, 0, nr]),
    [0x06, 0, 0, 0x7fff0000], // allow
    [0x06, 0, 0, 0x00050000 | 1], // errno EPERM
  ];
  const b = Buffer.alloc(ins.length * 8);
  ins.forEach(([code, jt, jf, v], i) => {
    b.writeUInt16LE(code, i * 8);
    b.writeUInt8(jt, i * 8 + 2);
    b.writeUInt8(jf, i * 8 + 3);
    b.writeUInt32LE(v >>> 0, i * 8 + 4);
  });
  return b;
}

/** Runs a command under Landlock, writes allowed only beneath the folders given (Codex's Landlock sandbox):
 * `[...LANDLOCK, 'dir[:dir...]', cmd, ...args]`. The system python: a version manager's shim on PATH (pyenv)
 * costs seconds per start. */
export const LANDLOCK = [existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', join(ROOT, 'test', 'daemon', 'fixtures', 'landlock-exec.py')];

/**
 * A real bash, child of this test process, standing for a run's shell: a raw exec request naming it as its
 * asker (`host_pid`) under a pre-flight whose `pid` is this process is the model's own command, as the
 * daemon reads the ancestry from /proc (src/decide/provenance.ts), so an allow rule may escalate it. Killed
 * by `stop()`.
 */
export function runShell(): { pid: number; stop(): void } {
  const c = spawn('/bin/bash', ['-c', 'sleep 600; exit 0'], { stdio: 'ignore' });
  return { pid: c.pid!, stop: () => c.kill('SIGKILL') };
}
