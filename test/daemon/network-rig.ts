/**
 * A real daemon in this test process (runDaemon, the same code `gate daemon run` runs), so a test can call
 * its networkDecider as the network proxy does; runs made by real preflight requests on the request
 * channel; and a real `gate approve --json` approver process answering each prompt as the test says.
 * Test-only; everything in a temp environment of its own, loopback only (no connection is made at all).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runDaemon } from '../../src/daemon/main.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { approvalCall } from '../../src/client/approval-client.js';
import { request } from '../../src/transport/client.js';
import type { PreflightReply } from '../../src/protocol/messages.js';
import type { GatePaths } from '../../src/paths/paths.js';
import type { ConnectionRequest } from '../../src/network/types.js';
import { GATE, tempEnv, type TempEnv } from '../helpers/env.js';
import { track, waitFor } from '../helpers/daemon.js';

export interface NetRig {
  te: TempEnv;
  paths: GatePaths;
  daemon: Daemon<unknown>;
  /** the daemon's log lines */
  logs: string[];
  /** a run, as a gate-sh's pre-flight makes one (pid: this process, so it stays live until finished) */
  run(script: string): Promise<string>;
  finish(runId: string): Promise<void>;
  /** decide as the proxy would */
  decide(runId: string, host: string, port?: number, protocol?: ConnectionRequest['protocol'], addresses?: string[]): ReturnType<Daemon<unknown>['networkDecider']['decide']>;
  /** stop the daemon (the temp folder stays) */
  stop(): Promise<void>;
}

export async function netRig(o: { te?: TempEnv; rules?: string; config?: string } = {}): Promise<NetRig> {
  const te = o.te ?? tempEnv();
  if (o.rules !== undefined) {
    mkdirSync(join(te.env.GATE_HOME, 'rules'), { recursive: true });
    writeFileSync(join(te.env.GATE_HOME, 'rules', 'team.rules'), o.rules);
  }
  if (o.config !== undefined) {
    mkdirSync(te.env.GATE_HOME, { recursive: true });
    writeFileSync(join(te.env.GATE_HOME, 'config.toml'), o.config);
  }
  mkdirSync(join(te.dir, 'ws'), { recursive: true });
  const logs: string[] = [];
  let ready!: (v: { paths: GatePaths; daemon: Daemon<unknown> }) => void;
  const up = new Promise<{ paths: GatePaths; daemon: Daemon<unknown> }>((r) => (ready = r));
  const stopped = runDaemon({ env: te.env, log: (l) => logs.push(l), onReady: (paths, daemon) => ready({ paths, daemon }) });
  const { paths, daemon } = await Promise.race([up, stopped.then(() => Promise.reject(new Error(`the daemon stopped: ${logs.join('\n')}`)))]);
  return {
    te,
    paths,
    daemon,
    logs,
    async run(script) {
      const r = await request<PreflightReply>(paths, {
        type: 'preflight',
        shell: 'bash',
        flag: '-c',
        script,
        cwd: join(te.dir, 'ws'),
        pid: process.pid,
        sandbox_permissions: 'use_default',
      });
      if (r.action.type === 'Deny') throw new Error(`the run was denied: ${r.action.reason}`);
      return r.run_id;
    },
    async finish(runId) {
      await request(paths, { type: 'run-finished', run_id: runId, exit_status: 0, duration_ms: 1 });
    },
    decide(runId, host, port = 443, protocol = 'https', addresses = []) {
      return daemon.networkDecider.decide({ runId, host, port, protocol, addresses }, new AbortController().signal);
    },
    async stop() {
      await approvalCall(paths, 'stop', { force: true });
      await stopped;
    },
  };
}

export interface Approver {
  /** every prompt shown to it */
  prompts: Record<string, any>[];
  /** the answer to give each prompt (default: denied) */
  answer: (p: Record<string, any>) => unknown;
  close(): Promise<void>;
}

/** A real `gate approve --json` attached to the daemon. */
export async function approver(env: Record<string, string>, answer: Approver['answer'] = () => 'denied'): Promise<Approver> {
  const a: ChildProcess = track(spawn(process.execPath, [GATE, 'approve', '--json', '--name', 'net-test'], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  const out: Approver = {
    prompts: [],
    answer,
    close: async () => {
      if (a.exitCode !== null || a.signalCode !== null) return;
      const gone = new Promise((r) => a.once('exit', r));
      a.kill('SIGTERM');
      await gone;
    },
  };
  let attached = false;
  createInterface({ input: a.stdout! }).on('line', (l) => {
    const e = JSON.parse(l);
    if (e.type === 'attached') attached = true;
    if (e.type === 'prompt') {
      out.prompts.push(e);
      a.stdin!.write(JSON.stringify({ approval_id: e.approval_id, decision: out.answer(e) }) + '\n');
    }
  });
  await waitFor(() => attached, 'the approver to attach');
  return out;
}
