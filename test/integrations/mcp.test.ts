/**
 * `gate mcp` driven by the SDK's own Client over real stdio, against a real daemon, real gate-sh, real
 * bubblewrap: allow, forbidden, prompts accepted and declined via elicitation (also from a nested shell),
 * timeouts, the sandbox-state update, clients without elicitation support, reject.mcp_elicitations.
 * One behaviour per test, each with a daemon and `gate mcp` sessions of its own.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { EmptyResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { approvalCall } from '../../src/client/approval-client.js';
import { approveConsole } from '../daemon/helpers.js';
import { type McpSession, mcpSession } from './helpers.js';
import { GATE, GATE_SH, type TempEnv, tempEnv } from '../helpers/env.js';
import { type DaemonProc, killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

const RULES = `prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash")
prefix_rule(pattern=["touch"], decision="prompt", justification="creates files")
prefix_rule(pattern=["echo"], decision="allow")
`;

interface Rig {
  te: TempEnv;
  /** the workspace folder the calls run in */
  w: string;
  d: DaemonProc;
  /** a client with elicitation support */
  a: McpSession;
  /** a client without it (withRig's `b`) */
  b?: McpSession;
}

/** A daemon with RULES (on-request) and a `gate mcp` client with elicitation support (and, with `b`, one
 * without); on failure what they saw is printed; everything is stopped and removed whatever happened. */
async function withRig(fn: (r: Rig) => Promise<void>, o: { b?: boolean } = {}): Promise<void> {
  const te = tempEnv();
  const w = join(te.dir, 'w');
  mkdirSync(w);
  const d = await startDaemon({ te, rulesFile: 'team.rules', rules: RULES, args: ['--approval-policy', 'on-request'] });
  let a: McpSession | undefined;
  let b: McpSession | undefined;
  try {
    a = await mcpSession(te.env, { elicitation: true });
    if (o.b) b = await mcpSession(te.env, { elicitation: false });
    await fn({ te, w, d, a, b });
  } catch (err) {
    process.stderr.write(
      `--- elicitations:\n${(a?.elicitations ?? []).map((x) => JSON.stringify(x)).join('\n')}\n--- gate mcp (a) stderr:\n${a?.stderr() ?? ''}\n--- daemon:\n${d.output()}\n`,
    );
    throw err;
  } finally {
    await a?.close();
    await b?.close();
    await d.stop();
    te.cleanup();
  }
}

/** What the daemon shows of the hosts' own sandboxes (`gate status`, JSON). */
async function hostSandboxes(r: Pick<Rig, 'd'>): Promise<{ own: unknown; by: { policy: unknown; by: string }[] } | undefined> {
  return ((await approvalCall(r.d.paths, 'status')) as Record<string, any>).status?.sandbox_narrowed;
}

/** The sandbox-state update as a request: read-only for this host's calls, gate-sh's own for everyone else. */
async function readOnly(r: Rig): Promise<void> {
  await r.a.client.request({ method: 'codex/sandbox-state/update', params: { sandboxPolicy: { type: 'read-only' } } } as never, EmptyResultSchema);
  assert.deepEqual((await hostSandboxes(r))?.by.map((x) => x.policy), [{ type: 'read-only' }]);
  const cfg = (await approvalCall(r.d.paths, 'config-get')).config as Record<string, any>;
  assert.equal(cfg.sandbox_mode, 'workspace-write', "gate-sh's own is not changed");
}

/** A gate-sh of the same session that is not this host's: it writes in the workspace as gate-sh's own allows. */
function otherClientWrites(r: Pick<Rig, 'te' | 'w'>, name: string): boolean {
  const g = spawnSync(GATE_SH, ['-c', `echo other > ${name}`], { cwd: r.w, env: r.te.env, encoding: 'utf8' });
  return g.status === 0 && existsSync(join(r.w, name));
}

test('tools/list: one shell tool with Codex\'s parameters; the sandbox-state capability', { timeout: 60_000 }, () =>
  withRig(async ({ a }) => {
    const tools = await a.client.listTools();
    assert.deepEqual(
      tools.tools.map((t) => t.name),
      ['shell'],
    );
    assert.deepEqual(Object.keys(tools.tools[0].inputSchema.properties ?? {}).sort(), [
      'additional_permissions',
      'command',
      'justification',
      'login',
      'sandbox_permissions',
      'timeout_ms',
      'workdir',
    ]);
    assert.deepEqual(tools.tools[0].inputSchema.required, ['command', 'workdir']);
    assert.deepEqual(a.client.getServerCapabilities()?.experimental, {
      'codex/sandbox-state': { version: '1.0.0' },
      'codex/sandbox-state-meta': { version: '1.0.0' },
    });
  }));

test('allow: runs, output and status come back', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    const r = await a.shell({ command: 'echo hello; echo err >&2; exit 3', workdir: w });
    assert.equal(r.exit_code, 3);
    assert.equal(r.output, 'hello\nerr\n');
    assert.equal(r.timed_out, false);
    assert.ok(Number.isInteger(r.duration.secs) && Number.isInteger(r.duration.nanos));
  }));

test('output over 1 MiB keeps its head and tail; a timeout beyond setTimeout\'s range is no timeout', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    const r = await a.shell({ command: 'yes abcdefghi | head -c 3000000; echo END', workdir: w, timeout_ms: 2 ** 40 });
    assert.equal(r.exit_code, 0);
    assert.equal(r.timed_out, false);
    assert.ok(r.output.startsWith('abcdefghi\n'));
    assert.ok(r.output.endsWith('i\nEND\n'));
    assert.match(r.output, /\n\[\.\.\. 1951428 bytes of output omitted \.\.\.\]\n/);
  }));

test('forbidden: nothing runs, nobody is asked', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    const r = await a.shell({ command: `echo x > ${w}/kept && rm -f ${w}/kept`, workdir: w });
    assert.equal(r.exit_code, 126);
    assert.match(r.output, /use trash/);
    assert.equal(existsSync(join(w, 'kept')), false);
    assert.equal(a.elicitations.length, 0);
  }));

test('a prompt through elicitation: accepted runs (Codex\'s message and schema); declined and cancelled do not', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    // prompt, accepted via elicitation (Codex's message and schema)
    a.answers.push({ action: 'accept', content: { reason: 'fine' } });
    let r = await a.shell({ command: 'touch made', workdir: w, login: false });
    assert.equal(r.exit_code, 0, r.output);
    assert.ok(existsSync(join(w, 'made')));
    assert.equal(a.elicitations.length, 1);
    const e = a.elicitations[0] as unknown as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    assert.equal(e.message.split('\n')[0], `Allow agent to run \`touch made\` in \`${w}\`?`);
    assert.match(e.message, /Reason: .*creates files/);
    // (the SDK client strips the schema's "title"; elicitation.test.ts pins it on the server side)
    assert.ok('reason' in e.requestedSchema.properties);

    // prompt, declined: nothing runs
    a.answers.push({ action: 'decline' });
    r = await a.shell({ command: 'touch never', workdir: w });
    assert.equal(r.exit_code, 126);
    // an MCP client may answer without asking anybody (codex exec declines every request): never worded as a person's
    assert.match(r.output, /gate-sh: denied: touch never: approval needed for 'touch never'; the MCP client \(mcp-\d+\) declined it, which a client may do without asking anybody \(codex exec declines every request\): .*creates files/);
    assert.doesNotMatch(r.output, /User denied/);
    assert.equal(existsSync(join(w, 'never')), false);

    // cancel → abort
    a.answers.push({ action: 'cancel' });
    r = await a.shell({ command: 'touch never', workdir: w });
    assert.equal(r.exit_code, 126);
    assert.match(r.output, /approval needed for 'touch never'; the MCP client \(mcp-\d+\) cancelled it/);
  }));

test('a nested shell\'s prompts belong to this client\'s run too', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    // the outer pre-flight asks about the `bash -c`, and the exec gate inside the sandbox (nested run) asks
    // about /usr/bin/touch itself
    const n0 = a.elicitations.length;
    a.answers.push({ action: 'accept', content: { decision: 'approved_for_session' } }, { action: 'accept' });
    const r = await a.shell({ command: `bash -c 'touch nested'`, workdir: w });
    assert.equal(r.exit_code, 0, r.output);
    assert.ok(existsSync(join(w, 'nested')));
    assert.ok(a.elicitations.length > n0);
    assert.match((a.elicitations.at(-1) as { message: string }).message, /^Allow agent to run `(\/usr\/bin\/)?touch nested`/);
  }));

test('timeout: the process group is killed; time spent in an elicitation does not count (paused)', { timeout: 90_000 }, () =>
  withRig(async ({ a, w }) => {
    let r = await a.shell({ command: 'echo started; sleep 60', workdir: w, timeout_ms: 5000 });
    assert.equal(r.timed_out, true);
    assert.match(r.output, /started/);
    assert.ok(r.duration.secs < 30);
    // ... while a human takes longer than the whole timeout to answer, the clock is paused
    a.answers.push({ action: 'accept' });
    a.answerDelayMs = 7000;
    r = await a.shell({ command: 'touch slowly', workdir: w, timeout_ms: 6000 });
    a.answerDelayMs = 0;
    assert.equal(r.timed_out, false, r.output);
    assert.equal(r.exit_code, 0, r.output);
    assert.ok(existsSync(join(w, 'slowly')));
  }));

test('the client cancels the call: the run\'s process group is killed; the run is in gate mcp\'s own process', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    const ac = new AbortController();
    const cancelled = a.client.callTool({ name: 'shell', arguments: { command: 'sleep 61.2345', workdir: w, timeout_ms: 60_000 } }, undefined, {
      signal: ac.signal,
    });
    cancelled.catch(() => undefined); // judged below, once the call is cancelled, whatever happens before
    const running = () => spawnSync('pgrep', ['-f', 'sleep 61.2345']).status === 0;
    try {
      await waitFor(() => running() || undefined, 'the sleep to start');
      // the call runs in gate mcp's own process (issue 19): the run's ancestors hold no gate-sh process
      const sleepPid = Number(spawnSync('pgrep', ['-f', '-o', 'sleep 61.2345'], { encoding: 'utf8' }).stdout.trim());
      const ancestors: string[] = [];
      for (let pid = sleepPid; pid > 1 && ancestors.length < 20; ) {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        ancestors.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
        pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      }
      assert.ok(!ancestors.some((c) => c.startsWith('gate-sh')), ancestors.join(' < '));
      assert.ok(ancestors.includes('node') || ancestors.includes('MainThread'), ancestors.join(' < '));
    } finally {
      ac.abort();
    }
    await assert.rejects(cancelled);
    await waitFor(() => !running() || undefined, 'the sleep to be killed', 5_000);
  }));

test('a client without elicitation support: no approver → denied; a console answers; reject.mcp_elicitations sends the other client\'s prompts there', {
  timeout: 60_000,
}, () =>
  withRig(async (rig) => {
    const { te, d, a, w } = rig;
    const b = rig.b!;
    // its prompt goes to the other approvers — none → denied at once
    const before = a.elicitations.length;
    let r = await b.shell({ command: 'touch by-b', workdir: w });
    assert.equal(r.exit_code, 126);
    assert.match(r.output, /no approver is attached/);
    // ... and with a console attached, the console answers it; client a is never asked about b's run
    const c = await approveConsole(te.env, 'human');
    try {
      const pending = b.shell({ command: 'touch by-b', workdir: w });
      const p = await c.next('prompt');
      assert.equal(p.display, 'touch by-b');
      c.answer(p.approval_id, 'approved');
      r = await pending;
      assert.equal(r.exit_code, 0, r.output);
      assert.equal(a.elicitations.length, before);

      // reject.mcp_elicitations: client a's prompts go to the console instead of an elicitation
      await approvalCall(d.paths, 'config-set', {
        key: 'approval_policy',
        value: '{"reject":{"sandbox_approval":false,"rules":false,"mcp_elicitations":true}}',
      });
      const pa = a.shell({ command: 'touch by-a', workdir: w });
      const q = await c.next('prompt');
      assert.equal(q.display, 'touch by-a');
      c.answer(q.approval_id, 'denied');
      r = await pa;
      assert.equal(r.exit_code, 126);
      assert.equal(a.elicitations.length, before);
    } finally {
      await c.close();
    }
  }, { b: true }));

test("sandbox-state update: the host's calls run in the stricter of what it asks and gate-sh's own; other clients keep gate-sh's own", {
  timeout: 60_000,
}, () =>
  withRig(async (rig) => {
    const { d, a, w } = rig;
    // workspace-write, no extra roots: the host's extra roots do not widen it
    await a.client.request(
      {
        method: 'codex/sandbox-state/update',
        params: { sandboxPolicy: { type: 'workspace-write', writable_roots: ['/srv/x'], network_access: false }, sandboxCwd: w, codexLinuxSandboxExe: null },
      } as never,
      EmptyResultSchema,
    );
    const cfg = (await approvalCall(d.paths, 'config-get')).config as Record<string, any>;
    assert.equal(cfg.sandbox_mode, 'workspace-write');
    assert.deepEqual(cfg.sandbox_workspace_write.writable_roots, [], 'the host\'s extra roots do not widen gate-sh\'s own');
    const shown = await hostSandboxes(rig);
    assert.equal((shown?.by[0].policy as { type?: string } | undefined)?.type, 'workspace-write');
    let r = await a.shell({ command: `echo yes > ${w}/ws`, workdir: w });
    assert.equal(r.exit_code, 0, r.output);
    await readOnly(rig);
    r = await a.shell({ command: `echo no > ${w}/ro`, workdir: w });
    assert.notEqual(r.exit_code, 0);
    assert.equal(existsSync(join(w, 'ro')), false);
    // the same daemon's other clients are not narrowed by this host (issue 31: it was daemon-wide)
    assert.equal(otherClientWrites(rig, 'other'), true, 'a gate-sh that is not the host\'s writes in the workspace');
    // nor does the host's narrowing reach a nested gate-sh of its call out of it
    r = await a.shell({ command: `${GATE_SH} -c 'echo nested > ${w}/nested'`, workdir: w });
    assert.notEqual(r.exit_code, 0, r.output);
    assert.equal(existsSync(join(w, 'nested')), false);
  }));

test('a call asking to leave the sandbox (Codex\'s shell-tool parameters): the elicitation says so and why; accepted, it runs outside', {
  timeout: 60_000,
}, () =>
  withRig(async (rig) => {
    const { a, w } = rig;
    await readOnly(rig); // in the sandbox the write would fail
    a.answers.push({ action: 'accept' });
    const e0 = a.elicitations.length;
    const r = await a.shell({ command: `echo yes > ${w}/esc`, workdir: w, sandbox_permissions: 'require_escalated', justification: 'write the result file' });
    assert.equal(r.exit_code, 0, r.output);
    assert.equal(readFileSync(join(w, 'esc'), 'utf8'), 'yes\n');
    const asked = (a.elicitations[e0] as { message: string }).message;
    assert.match(asked, /Reason: write the result file \(gate: /);
    assert.match(asked, /Asks: to run outside the sandbox/);
  }));

test('bad params: a tool error or invalid params, and nothing runs', { timeout: 60_000 }, () =>
  withRig(async ({ a, w }) => {
    const noProfile = await a.client.callTool({
      name: 'shell',
      arguments: { command: 'true', workdir: w, sandbox_permissions: 'with_additional_permissions' },
    });
    assert.equal(noProfile.isError, true);
    await assert.rejects(
      a.client.request({ method: 'codex/sandbox-state/update', params: { sandboxPolicy: { type: 'bogus' } } } as never, EmptyResultSchema),
      (err: unknown) => err instanceof McpError && err.code === ErrorCode.InvalidParams,
    );
    const bad = await a.client.callTool({ name: 'shell', arguments: { command: 'echo x', workdir: 'relative' } });
    assert.equal(bad.isError, true);
  }));

test('sandbox-state as a notification: a looser request never widens gate-sh\'s own sandbox, and the log says so', { timeout: 60_000 }, () =>
  withRig(async (rig) => {
    const { d, a, w } = rig;
    await readOnly(rig);
    // from read-only back to gate-sh's own workspace-write, not to danger-full-access
    await a.client.notification({ method: 'codex/sandbox-state/update', params: { sandboxPolicy: { type: 'danger-full-access' } } } as never);
    await waitFor(
      async () => ((await hostSandboxes({ d }))?.by[0].policy as { type?: string } | undefined)?.type === 'danger-full-access' || undefined,
      'the notification to apply',
    );
    await waitFor(() => /the host asked for the sandbox \{"type":"danger-full-access"\}; gate-sh's own/.test(a.stderr()) || undefined, 'the log line');
    const outside = `/var/tmp/gate-mcp-outside-${process.pid}`; // neither the workspace nor /tmp
    const r = await a.shell({ command: `echo no > ${outside}`, workdir: w });
    const wrote = existsSync(outside);
    if (wrote) rmSync(outside);
    assert.notEqual(r.exit_code, 0, 'still sandboxed: a write outside the workspace fails');
    assert.equal(wrote, false);
  }));

/** Codex 0.169+'s sandbox state in a tools/call's _meta, as `codex exec --sandbox <mode>` sends it. */
function codexMeta(w: string, mode: 'read-only' | 'workspace-write' | 'danger-full-access', extra: object[] = []): Record<string, unknown> {
  const root = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };
  const writes = [
    { path: { type: 'path', path: w }, access: 'write' },
    { path: { type: 'special', value: { kind: 'slash_tmp' } }, access: 'write' },
    { path: { type: 'special', value: { kind: 'tmpdir' } }, access: 'write' },
    { path: { type: 'path', path: `${w}/.git` }, access: 'read', missing_path_behavior: 'skip' },
  ];
  const permissionProfile =
    mode === 'danger-full-access'
      ? { type: 'disabled' }
      : { type: 'managed', file_system: { type: 'restricted', entries: [root, ...(mode === 'workspace-write' ? writes : []), ...extra] }, network: 'restricted' };
  const state = { permissionProfile, codexLinuxSandboxExe: '/nonexistent/codex-linux-sandbox', sandboxCwd: `file://${w}`, useLegacyLandlock: false };
  return { 'codex/sandbox-state': state, 'codex/sandbox-state-meta': state };
}

test("Codex's sandbox with each call (_meta): read-only is in force for the call and shown by gate status; withdrawn when the host goes", {
  timeout: 60_000,
}, () =>
  withRig(async ({ d, a, w, te }) => {
    // allowed by a rule, so only the sandbox stops it: without the state it writes
    let r = await a.shell({ command: `echo yes > ${w}/before`, workdir: w });
    assert.equal(r.exit_code, 0, r.output);
    assert.equal(readFileSync(join(w, 'before'), 'utf8'), 'yes\n');
    r = await a.shell({ command: `echo no > ${w}/ro`, workdir: w }, codexMeta(w, 'read-only'));
    assert.notEqual(r.exit_code, 0);
    assert.match(r.output, /Read-only file system/);
    assert.equal(existsSync(join(w, 'ro')), false);
    const status = spawnSync(process.execPath, [GATE, 'status'], { env: te.env, encoding: 'utf8' });
    assert.match(status.stdout, /sandbox policy: {2}\{"type":"workspace-write".*\n {2}narrowed for their own calls \(each runs in the stricter of this and its host's\) by:/);
    assert.match(status.stdout, /gate mcp \(pid \d+\) \(gate-sh-test asked for its sandbox: read-only\): \{"type":"read-only"\}/);
    // the host's read-only is its own calls': another gate-sh of the same daemon writes (issue 31: it was daemon-wide)
    assert.equal(((await approvalCall(d.paths, 'config-get')).config as Record<string, any>).sandbox_mode, 'workspace-write');
    assert.equal(otherClientWrites({ te, w }, 'other'), true, "a gate-sh that is not the host's writes in the workspace");
    // the same host asking for workspace-write again: gate-sh's own is back for its calls
    r = await a.shell({ command: `echo again > ${w}/ws`, workdir: w }, codexMeta(w, 'workspace-write'));
    assert.equal(r.exit_code, 0, r.output);
    // a call with no state of its own: the host's last update (none here), so gate-sh's own
    r = await a.shell({ command: `echo plain > ${w}/plain`, workdir: w });
    assert.equal(r.exit_code, 0, r.output);
    await a.shell({ command: 'true', workdir: w }, codexMeta(w, 'read-only'));
    assert.equal(((await hostSandboxes({ d }))?.by[0].policy as { type?: string } | undefined)?.type, 'read-only');
    // the host goes away: what status shows of it goes with it
    await a.close();
    await waitFor(async () => ((await hostSandboxes({ d })) === undefined ? true : undefined), 'the host sandbox to be withdrawn');
  }));

test("Codex's sandbox with each call: danger-full-access never widens gate-sh's own; a sandbox gate-sh cannot apply refuses the call", {
  timeout: 60_000,
}, () =>
  withRig(async ({ a, w }) => {
    const outside = `/var/tmp/gate-mcp-meta-${process.pid}`; // neither the workspace nor /tmp
    try {
      const r = await a.shell({ command: `echo no > ${outside}`, workdir: w }, codexMeta(w, 'danger-full-access'));
      assert.notEqual(r.exit_code, 0, 'still sandboxed: a write outside the workspace fails');
      assert.equal(existsSync(outside), false);
      await waitFor(() => /the host asked for the sandbox \{"type":"danger-full-access"\}; gate-sh's own/.test(a.stderr()) || undefined, 'the log line');
    } finally {
      rmSync(outside, { force: true });
    }
    // a deny entry gate-sh's sandbox cannot express: refused, nothing runs
    const deny = { path: { type: 'path', path: `${w}/secret` }, access: 'none' };
    await assert.rejects(
      a.shell({ command: `echo x > ${w}/refused`, workdir: w }, codexMeta(w, 'workspace-write', [deny])),
      /cannot apply the sandbox the host asks for: a sandbox entry gate-sh cannot apply/,
    );
    assert.equal(existsSync(join(w, 'refused')), false);
  }));
