/**
 * Exec-gate test rig: a real daemon (`gate daemon run`), a real auto-approving `gate approve --json`
 * console (it approves every prompt and records them), and gate-sh runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GATE, GATE_SH, ROOT, tempEnv, type TempEnv } from '../helpers/env.js';
import { gatePaths, type GatePaths } from '../../src/protocol/paths.js';

export interface Rig {
  te: TempEnv;
  env: Record<string, string>;
  paths: GatePaths;
  /** the workspace (cwd of runs) */
  work: string;
  /** prompts the auto-approver answered */
  prompts: Record<string, any>[];
  daemonLog(): string;
  /** SIGKILL the daemon and wait until it is gone */
  killDaemon(): Promise<void>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
function track(c: ChildProcess): ChildProcess {
  children.add(c);
  c.on('exit', () => children.delete(c));
  return c;
}

export async function waitFor<T>(f: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The jobs' results in order, four running at a time (a datagram queue holds 10 messages; these are
 * tests, not load tests). */
export async function fourAtATime<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const k = next++;
      out[k] = await jobs[k]();
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return out;
}

/** rules: lines of a .rules file; approve: attach the auto-approver. */
export async function startRig(o: { rules: string[]; approve?: boolean; env?: Record<string, string>; config?: string }): Promise<Rig> {
  // no turn sandbox unless a config says otherwise: these tests are about the exec gate
  const te = tempEnv({ ...(o.config ? {} : { GATE_SANDBOX_MODE: 'danger-full-access' }), GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1', ...(o.env ?? {}) });
  const env = te.env;
  mkdirSync(join(env.GATE_HOME, 'rules'), { recursive: true });
  writeFileSync(join(env.GATE_HOME, 'rules', 'default.rules'), o.rules.join('\n') + '\n');
  if (o.config) writeFileSync(join(env.GATE_HOME, 'config.toml'), o.config);
  const work = join(te.dir, 'w');
  mkdirSync(work);
  const paths = gatePaths(env);
  let log = '';
  const daemon = track(spawn(process.execPath, [GATE, 'daemon', 'run', '--no-terminal'], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  daemon.stdout!.on('data', (d) => (log += d));
  daemon.stderr!.on('data', (d) => (log += d));
  await waitFor(() => log.includes(' ready') || daemon.exitCode !== null, 'the daemon to start');
  if (daemon.exitCode !== null) throw new Error(`daemon did not start: ${log}`);
  const prompts: Record<string, any>[] = [];
  let approver: ChildProcess | undefined;
  if (o.approve) {
    approver = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'auto'], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
    let attached = false;
    createInterface({ input: approver.stdout! }).on('line', (l) => {
      const e = JSON.parse(l);
      if (e.type === 'attached') attached = true;
      if (e.type === 'prompt') {
        prompts.push(e);
        approver!.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: 'approved' }) + '\n');
      }
    });
    await waitFor(() => attached, 'the approver to attach');
  }
  return {
    te,
    env,
    paths,
    work,
    prompts,
    daemonLog: () => log,
    killDaemon: async () => {
      if (daemon.exitCode !== null || daemon.signalCode !== null) return;
      const gone = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGKILL');
      await gone;
    },
    stop: async () => {
      for (const c of [approver, daemon]) {
        if (!c || c.exitCode !== null || c.signalCode !== null) continue;
        c.kill('SIGTERM');
        await new Promise((r) => c.once('exit', r));
      }
      te.cleanup();
    },
  };
}

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function run(program: string, args: string[], o: { env: Record<string, string>; cwd: string; input?: string | Buffer; timeoutMs?: number }): Promise<Result> {
  return new Promise((resolve) => {
    const child = track(spawn(program, args, { env: o.env, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdin!.on('error', () => {});
    child.stdin!.end(o.input ?? '');
    const t = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    let grace: NodeJS.Timeout | undefined;
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(t);
      clearTimeout(grace);
      resolve({ code, signal, stdout, stderr });
    };
    // What the process wrote before it exited may still be in the pipes at 'exit' (node reads them after:
    // under load a gate-sh that printed its denial and exited 126 was seen with an empty stderr), so the
    // result waits for 'close'; a background job that outlives the process and keeps the pipes open gets
    // a grace period instead.
    child.on('exit', (code, signal) => {
      clearTimeout(t);
      grace = setTimeout(() => done(code, signal), RUN_GRACE_MS);
    });
    child.on('close', (code, signal) => done(code, signal));
  });
}

/** How long a result waits, after its process exited, for the pipes to be read to their end. */
const RUN_GRACE_MS = 2000;

export function gateSh(rig: Rig, script: string, o: { input?: string | Buffer; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}): Promise<Result> {
  return run(GATE_SH, ['-c', script], { env: { ...rig.env, ...(o.env ?? {}) }, cwd: o.cwd ?? rig.work, input: o.input, timeoutMs: o.timeoutMs });
}

export function killAll(): void {
  for (const c of children) c.kill('SIGKILL');
}

let escPath: string | undefined;

/** test/exec-gate/esc.sh, outside any writable folder (a program the caller could have written is never
 * escalated without a prompt): the checkout itself, unless it lies under a world-writable temporary
 * folder (a CI clone in /tmp), then a root-owned copy under /var/lib, removed at exit. */
export function escFixture(): string {
  if (escPath) return escPath;
  const src = join(ROOT, 'test', 'exec-gate', 'esc.sh');
  if (!/^\/(tmp|var\/tmp|dev\/shm)(\/|$)/.test(ROOT)) return (escPath = src);
  const dir = mkdtempSync('/var/lib/gate-sh-test-');
  escPath = join(dir, 'esc.sh');
  copyFileSync(src, escPath);
  chmodSync(escPath, 0o755);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return escPath;
}
