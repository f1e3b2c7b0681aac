import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempEnv } from '../helpers/env.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { AuditLog } from '../../src/daemon/audit.js';
import { PolicyWatcher } from '../../src/daemon/policy-watch.js';
import { policyBinding } from '../../src/daemon/policy-binding.js';
import { loadConfig } from '../../src/config/load.js';
import { gatePaths } from '../../src/paths/paths.js';
import { PROTOCOL_VERSION } from '../../src/protocol/messages.js';
import type { HandlerContext } from '../../src/transport/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The daemon core in this process (real policy, config, audit log; no sockets: the warm-up is about timing
// within the daemon, which a spawned daemon's 10 s start delay would make slow to test).
test('warm-up: starts after the delay, steps only while no client is asking, stops at its count; clients are answered meanwhile', async () => {
  const te = tempEnv();
  const paths = gatePaths(te.env);
  const audit = new AuditLog(join(te.dir, 'audit.jsonl'), 'test');
  const binding = policyBinding({ env: te.env, extraFiles: [], gitReadOnly: () => false });
  const config = loadConfig({ file: paths.configFile, env: te.env, flags: { approval_policy: 'never', sandbox_mode: 'danger-full-access' } });
  const logs: string[] = [];
  const daemon = new Daemon<unknown>({
    paths,
    config,
    policy: new PolicyWatcher(binding.loader, () => {}),
    deciderFor: binding.deciderFor,
    amend: async () => '',
    audit,
    escalation: { grant() {} },
    log: (l) => logs.push(l),
    requestStop() {},
  });
  const ctx: HandlerContext = { transport: 'dgram', setPending() {} };
  const progress = () => (daemon.info().warm_up as { done: number; of: number }).done;
  let n = 0;
  const ask = async () => {
    const r = (await daemon.handle(
      {
        v: PROTOCOL_VERSION,
        id: `t${n++}`,
        type: 'preflight',
        shell: 'bash',
        flag: '-c',
        script: `echo ${n} | wc -c`,
        cwd: '/tmp',
        pid: process.pid,
        sandbox_permissions: 'use_default',
      },
      ctx,
    )) as unknown as { json?: string };
    const reply = JSON.parse(r.json ?? JSON.stringify(r));
    assert.deepEqual(reply.subcommands.map((s: any) => s.argv[0]), ['echo', 'wc']);
  };
  try {
    daemon.warmUp({ scripts: 30, afterMs: 1_000, idleMs: 300 }); // margins for a loaded machine
    assert.equal(progress(), 1, 'one at once');
    await sleep(300);
    assert.equal(progress(), 1, 'nothing more before the delay');
    // busy past the delay: a client asks every 20 ms, so the warm-up waits
    const busyUntil = Date.now() + 1_300;
    while (Date.now() < busyUntil) {
      await ask();
      await sleep(20);
    }
    assert.equal(progress(), 1, 'no step while clients are asking');
    const end = Date.now() + 20_000;
    while (progress() < 30 && Date.now() < end) await sleep(50);
    assert.equal(progress(), 30, 'idle: it runs to its count');
    await sleep(200);
    assert.equal(progress(), 30, 'and stops there');
    await ask();
    assert.deepEqual(logs.filter((l) => l.startsWith('warm-up')), [], 'every warm-up script is decided without error');
  } finally {
    audit.close();
    te.cleanup();
  }
});
