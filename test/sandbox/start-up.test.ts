// The start-up phase (issue 17): under untrusted, what the login profile runs before the script is judged
// by forbidden rules only, never asked; the script's own commands are asked as before, and a start-up
// file the agent or a sandboxed script could have written gets no phase. Real daemon, gate-sh, bash,
// bubblewrap and exec gate; no approver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { run, execGateOptions } from '../exec-gate/helpers.js';
import { request } from '../../src/transport/client.js';
import type { ExecReply, PreflightReply } from '../../src/protocol/messages.js';
import { auditLines, type DaemonProc, startDaemon } from '../helpers/daemon.js';

const CONFIG = 'approval_policy = "untrusted"\nsandbox_mode = "workspace-write"\n';
// the home is outside every folder the sandbox can write (temp folders under /tmp are writable)
let home: string;
let rig: DaemonProc;
before(async () => {
  home = mkdtempSync('/var/tmp/gate-home-');
  writeFileSync(join(home, '.profile'), 'export FROM_PROFILE=yes\nuname -s > /dev/null\nid -u > /dev/null\n');
  rig = await startDaemon(
    execGateOptions({ rules: ['prefix_rule(pattern=["uname"], decision="prompt")'], config: CONFIG, env: { HOME: home, GATE_APPROVAL_POLICY: 'untrusted' } }),
  );
  writeFileSync(join(rig.ws, 'f.txt'), 'a\nb\n');
});
after(async () => {
  await rig.close();
  rmSync(home, { recursive: true, force: true });
});

const lc = (script: string, env: Record<string, string> = {}) => run(GATE_SH, ['-lc', script], { env: { ...rig.env, ...env }, cwd: rig.ws });
const bashLc = (script: string, env: Record<string, string> = {}) => run('/bin/bash', ['-lc', script], { env: { ...rig.env, ...env }, cwd: rig.ws });
function audit(): Record<string, any>[] {
  return auditLines<Record<string, any>>(join(rig.env.GATE_HOME, 'audit.jsonl'));
}

test('a login profile runs unasked under untrusted: its execs are start-up, the script runs as under bash', async () => {
  const script = 'ls && cat f.txt | wc -l && echo "$FROM_PROFILE"';
  const r = await lc(script);
  const b = await bashLc(script);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, b.stdout);
  assert.equal(r.stderr, b.stderr);
  const execs = audit().filter((a) => a.kind === 'exec' && a.phase === 'start-up');
  // the profile's uname is asked by a rule everywhere else; in start-up only forbidden rules count
  assert.ok(execs.some((a) => a.argv[0].endsWith('/uname') && a.action === 'Run'), JSON.stringify(execs));
  assert.ok(execs.some((a) => a.argv[0].endsWith('/id') && a.source === 'heuristic:start-up'));
  // the script's own commands are not start-up
  assert.ok(!execs.some((a) => a.argv[0].endsWith('/ls') || a.argv[0].endsWith('/wc')));
});

test("the script's own command is asked as before: the profile's uname ran, the script's is denied with no approver", async () => {
  const r = await lc('uname -s');
  assert.equal(r.code, 126);
  assert.match(r.stderr, /uname -s.*no approver is attached/);
});

test('the run id in the script\'s environment buys nothing once the phase is over: an exec with it is the script\'s', async () => {
  const r = await lc('echo "$GATE_RUN"');
  assert.equal(r.code, 0, r.stderr);
  const runId = r.stdout.trim();
  assert.match(runId, /^r-/);
  const reply = await request<ExecReply>(rig.paths, {
    type: 'exec',
    run_id: runId,
    program: '/usr/bin/uname',
    argv: ['uname', '-s'],
    cwd: rig.ws,
    pid: process.pid,
  });
  assert.equal(reply.action.type, 'Deny');
  const last = audit().filter((a) => a.kind === 'exec' && a.run_id === runId && String(a.argv?.[0]).endsWith('/uname')).pop();
  assert.equal(last?.phase, undefined);
  assert.equal(last?.decision, 'prompt');
  // while the same run's profile ran its uname as start-up
  assert.ok(audit().some((a) => a.kind === 'exec' && a.run_id === runId && a.phase === 'start-up' && String(a.argv?.[0]).endsWith('/uname')));
});

test('a request without the key gets no start-up phase', async () => {
  const base = { type: 'preflight', shell: 'bash', flag: '-lc', script: 'ls', cwd: rig.ws, pid: process.pid, sandbox_permissions: 'use_default' };
  const key = readFileSync(join(rig.paths.approvalDir, 'start-up.key'), 'utf8').trim();
  const bad = await request<PreflightReply>(rig.paths, { ...base, start_up: { key: 'x'.repeat(key.length), functions: [], home } });
  assert.equal(bad.start_up, undefined);
  const good = await request<PreflightReply>(rig.paths, { ...base, start_up: { key, functions: [], home } });
  assert.equal(good.start_up, true);
  const fns = await request<PreflightReply>(rig.paths, { ...base, start_up: { key, functions: ['BASH_FUNC_id%%'], home } });
  assert.equal(fns.start_up, undefined, 'exported functions in the environment: no phase');
});

test('BASH_ENV in the workspace (writable in the sandbox) is not the machine\'s: no phase, the profile is asked', async () => {
  writeFileSync(join(rig.ws, 'env.sh'), 'true\n');
  const r = await lc('ls f.txt', { BASH_ENV: join(rig.ws, 'env.sh') });
  assert.match(r.stderr, /gate-sh: denied: uname -s/);
  assert.ok(audit().some((a) => a.kind === 'run' && /no start-up phase: start-up file .*env\.sh is writable in the sandbox/.test(a.detail ?? '')));
});

test('a start-up file changed during the session (as a script with an approval could) gets no phase', async () => {
  appendFileSync(join(home, '.profile'), 'cat /dev/null\n');
  const r = await lc('ls f.txt');
  assert.match(r.stderr, /gate-sh: denied: uname -s/);
  assert.ok(audit().some((a) => a.kind === 'run' && /no start-up phase: start-up file .*\.profile changed during this session/.test(a.detail ?? '')));
});

test('a forbidden rule still holds in the start-up phase: the profile\'s rm is denied; where a rule only asks, it runs unasked', async () => {
  for (const [decision, survives] of [
    ['forbidden', true],
    ['prompt', false],
  ] as const) {
    const h = mkdtempSync('/var/tmp/gate-home-');
    writeFileSync(join(h, '.profile'), 'rm -f victim\n');
    const rules = [`prefix_rule(pattern=["rm"], decision="${decision}", justification="no rm in profiles")`];
    const d = await startDaemon(execGateOptions({ rules, config: CONFIG, env: { HOME: h, GATE_APPROVAL_POLICY: 'untrusted' } }));
    try {
      writeFileSync(join(d.ws, 'victim'), 'x\n');
      const r = await run(GATE_SH, ['-lc', 'echo script-ran'], { env: d.env, cwd: d.ws });
      assert.equal(r.stdout, 'script-ran\n', r.stderr);
      assert.equal(existsSync(join(d.ws, 'victim')), survives, `${decision}: ${r.stderr}`);
      const rm = readFileSync(join(d.env.GATE_HOME, 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((a) => a.kind === 'exec' && a.phase === 'start-up' && String(a.argv?.[0]).endsWith('/rm'));
      assert.equal(rm.length, 1, JSON.stringify(rm));
      if (survives) {
        assert.match(r.stderr, /gate-sh: denied: rm -f victim: .*no rm in profiles/);
        assert.equal(rm[0].decision, 'forbidden');
      } else {
        assert.equal(r.stderr, '');
        assert.equal(rm[0].decision, 'allow');
      }
    } finally {
      await d.close();
      rmSync(h, { recursive: true, force: true });
    }
  }
});
