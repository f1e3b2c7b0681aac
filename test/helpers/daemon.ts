/**
 * The one daemon rig of the test suites: a real `gate daemon run --no-terminal` in a temp environment of
 * its own (rules, config.toml, a workspace folder, an auto-approving `gate approve --json` console when
 * asked), per test file (`daemonForFile`), per test (`daemonForTest`) or by hand (`startDaemon`); and the
 * waiting and killing helpers every suite shares. Test-only; talks to the daemon over its own sockets in
 * the temp folders, nothing outside them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, type TestContext } from 'node:test';
import { GATE, tempEnv, type TempEnv } from './env.js';
import { gatePaths, type GatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';

/** Every process a test started, so a failing test cannot leave daemons behind (see `after(killAll)`). */
const started = new Set<ChildProcess>();
export function track<C extends ChildProcess>(c: C): C {
  started.add(c);
  c.once('exit', () => started.delete(c));
  return c;
}
export function killAll(): void {
  for (const c of started) c.kill('SIGKILL');
  started.clear();
}

/** f's first value that is neither undefined nor false, polled every 20 ms; throws after ms. */
/**
 * An audit log's records, its whole lines only: an append being made (by the daemon, or a supervisor writing a
 * reused exec's record) shows its first part to a reader before its last, so a last line without its newline is
 * read again, up to 2 s, until it ends.
 */
export function auditLines<T = Record<string, unknown>>(path: string): T[] {
  let text = readFileSync(path, 'utf8');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 200 && text !== '' && !text.endsWith('\n'); i++) {
    Atomics.wait(pause, 0, 0, 10);
    text = readFileSync(path, 'utf8');
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

export async function waitFor<T>(f: () => Promise<T | undefined> | T | undefined, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface DaemonOptions {
  /** an environment made beforehand (default: a fresh tempEnv) */
  te?: TempEnv;
  /** variables added to the environment (the daemon's, and so every client's that uses `env`) */
  env?: Record<string, string>;
  /** more `gate daemon run` arguments */
  args?: string[];
  /** a rules file in GATE_HOME/rules: its text, or its lines */
  rules?: string | string[];
  /** that file's name (default default.rules) */
  rulesFile?: string;
  /** GATE_HOME/config.toml */
  config?: string;
  /** a workspace folder of this name made in the temp folder (`ws`) */
  workspace?: string;
  /** attach `gate approve --json` answering every prompt 'approved' (recorded in `prompts`) */
  autoApprove?: boolean;
  /** the `gate` program (default this checkout's; a bench may measure another installation) */
  gate?: string;
  /** a command the daemon is started through (its argv before node's), e.g. nsenter into a namespace */
  wrap?: string[];
}

export interface DaemonProc {
  te: TempEnv;
  /** te.env */
  env: Record<string, string>;
  paths: GatePaths;
  child: ChildProcess;
  /** the workspace folder (options.workspace), else the temp folder */
  ws: string;
  /** prompts the auto-approver answered */
  prompts: Record<string, any>[];
  /** the daemon's stdout and stderr so far */
  output(): string;
  /** SIGKILL the daemon and wait until it is gone */
  kill(): Promise<void>;
  /** SIGTERM the daemon (and the auto-approver) and wait for them; the temp folder stays */
  stop(): Promise<void>;
  /** stop(), then remove the temp folder */
  close(): Promise<void>;
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** Starts the daemon; resolves once it answers a ping (and the auto-approver, if asked, is attached). */
export async function startDaemon(o: DaemonOptions = {}): Promise<DaemonProc> {
  const te = o.te ?? tempEnv();
  Object.assign(te.env, o.env ?? {});
  const env = te.env;
  if (o.rules !== undefined) {
    mkdirSync(join(env.GATE_HOME, 'rules'), { recursive: true });
    writeFileSync(join(env.GATE_HOME, 'rules', o.rulesFile ?? 'default.rules'), typeof o.rules === 'string' ? o.rules : o.rules.join('\n') + '\n');
  }
  if (o.config !== undefined) {
    mkdirSync(env.GATE_HOME, { recursive: true });
    writeFileSync(join(env.GATE_HOME, 'config.toml'), o.config);
  }
  const ws = o.workspace ? join(te.dir, o.workspace) : te.dir;
  if (o.workspace) mkdirSync(ws, { recursive: true });
  const paths = gatePaths(env);
  const gate = o.gate ?? GATE;
  const argv = [...(o.wrap ?? []), process.execPath, gate, 'daemon', 'run', '--no-terminal', ...(o.args ?? [])];
  const child = track(spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let exited = false;
  child.on('exit', () => (exited = true));
  await waitFor(async () => (exited ? Promise.reject(new Error(`daemon exited: ${out}`)) : pingDaemon(paths, 300)), 'the daemon to answer', 30_000);
  const prompts: Record<string, any>[] = [];
  let approver: ChildProcess | undefined;
  if (o.autoApprove) {
    const a = track(spawn(process.execPath, [gate, 'approve', '--json', '--name', 'auto'], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
    approver = a;
    let attached = false;
    createInterface({ input: a.stdout! }).on('line', (l) => {
      const e = JSON.parse(l);
      if (e.type === 'attached') attached = true;
      if (e.type === 'prompt') {
        prompts.push(e);
        a.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: 'approved' }) + '\n');
      }
    });
    await waitFor(() => attached, 'the approver to attach');
  }
  const d: DaemonProc = {
    te,
    env,
    paths,
    child,
    ws,
    prompts,
    output: () => out,
    kill: async () => {
      if (!running(child)) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
    stop: async () => {
      for (const c of [approver, child]) {
        if (!c || !running(c)) continue;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await gone;
      }
    },
    close: async () => {
      await d.stop();
      te.cleanup();
    },
  };
  return d;
}

/** One daemon for a test file: started before its tests, closed after them. */
export function daemonForFile(o: DaemonOptions = {}): { readonly d: DaemonProc } {
  const box = {} as { d: DaemonProc };
  before(async () => {
    box.d = await startDaemon(o);
  });
  after(() => box.d?.close());
  return box;
}

/** A daemon for one test, closed after it. */
export async function daemonForTest(t: TestContext, o: DaemonOptions = {}): Promise<DaemonProc> {
  const d = await startDaemon(o);
  t.after(() => d.close());
  return d;
}
