/**
 * Issue 32, findings 1 and 2: one truth about the settings in force. A caller's GATE_SANDBOX_MODE /
 * GATE_APPROVAL_POLICY either are the running daemon's or the call is refused naming both values and the
 * way out (bogus values too); `gate explain` and `gate status` say the same. A rules or config file broken
 * while the daemon runs refuses every run with its file:line:col until it is fixed. Real daemon, real
 * gate-sh (native and Node entry points), real bwrap.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { GATE } from '../helpers/env.js';
import { daemonForTest, killAll, waitFor } from '../helpers/daemon.js';
import { gateSh } from '../shell/helpers.js';

after(killAll);

const ENTRIES: { name: string; env: Record<string, string> }[] = [{ name: 'native', env: {} }, { name: 'node', env: { GATE_SH_NODE: '1' } }];

function gate(args: string[], env: Record<string, string>, cwd: string) {
  return spawnSync(process.execPath, [GATE, ...args], { env, cwd, encoding: 'utf8' });
}

test('a daemon in workspace-write: a caller asking read-only, untrusted or a bogus mode is refused, never run looser', { timeout: 180_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1' }, workspace: 'ws' });
  for (const entry of ENTRIES) {
    const base = { ...d.env, ...entry.env };
    // the daemon's own settings: the run writes (the allowed counterpart)
    const same = await gateSh(['-c', `touch same-${entry.name} && echo wrote`], { env: base, cwd: d.ws });
    assert.equal(same.code, 0, `${entry.name}: ${same.stderr}`);
    assert.equal(same.stdout.toString(), 'wrote\n');
    // a stricter sandbox asked for: refused, nothing written
    const ro = await gateSh(['-c', `touch second-${entry.name} && echo second-wrote`], { env: { ...base, GATE_SANDBOX_MODE: 'read-only' }, cwd: d.ws });
    assert.equal(ro.code, 126, `${entry.name}: ${ro.stderr}`);
    assert.equal(ro.stdout.toString(), '');
    assert.ok(!existsSync(join(d.ws, `second-${entry.name}`)), `${entry.name}: nothing ran`);
    const roErr = ro.stderr.toString();
    assert.match(roErr, /^gate-sh: GATE_SANDBOX_MODE=read-only asks for sandbox_mode read-only, but the gate daemon of session '[^']+' runs with sandbox_mode workspace-write/);
    assert.match(roErr, /gate config set sandbox_mode read-only/);
    assert.match(roErr, /nothing ran\n$/);
    // a stricter approval policy: refused
    const un = await gateSh(['-c', 'echo untrusted-ran'], { env: { ...base, GATE_APPROVAL_POLICY: 'untrusted' }, cwd: d.ws });
    assert.equal(un.code, 126, `${entry.name}: ${un.stderr}`);
    assert.match(un.stderr.toString(), /GATE_APPROVAL_POLICY=untrusted asks for approval_policy untrusted, but .* runs with approval_policy on-request/);
    // a value that is no mode: refused, named
    const bogus = await gateSh(['-c', 'echo bogus-ran'], { env: { ...base, GATE_SANDBOX_MODE: 'bogus' }, cwd: d.ws });
    assert.equal(bogus.code, 126);
    assert.equal(bogus.stdout.toString(), '');
    assert.match(bogus.stderr.toString(), /GATE_SANDBOX_MODE=bogus: 'sandbox_mode': invalid sandbox policy 'bogus'/);
  }
  // gate explain and gate status agree with the run
  const ex = gate(['explain', 'touch x'], { ...d.env, GATE_SANDBOX_MODE: 'read-only' }, d.ws);
  assert.equal(ex.status, 1, ex.stderr);
  assert.match(ex.stderr, /^gate: explain: GATE_SANDBOX_MODE=read-only asks for sandbox_mode read-only, but .* runs with sandbox_mode workspace-write/);
  const exSame = gate(['explain', 'touch x'], d.env, d.ws);
  assert.equal(exSame.status, 0, exSame.stderr);
  assert.match(exSame.stdout, /workspace-write/);
  const st = gate(['status'], { ...d.env, GATE_SANDBOX_MODE: 'read-only' }, d.ws);
  assert.match(st.stdout, /sandbox policy: {2}\{"type":"workspace-write"/);
  assert.match(st.stdout, /this environment: refused: GATE_SANDBOX_MODE=read-only/);
  // the way out the message names: the daemon set to read-only, the same caller now runs, read-only
  const set = gate(['config', 'set', 'sandbox_mode', 'read-only'], d.env, d.ws);
  assert.equal(set.status, 0, set.stderr);
  const now = await gateSh(['-c', 'touch third 2>/dev/null || echo read-only-held'], { env: { ...d.env, GATE_SANDBOX_MODE: 'read-only' }, cwd: d.ws });
  assert.equal(now.code, 0, now.stderr.toString());
  assert.equal(now.stdout.toString(), 'read-only-held\n');
  assert.ok(!existsSync(join(d.ws, 'third')));
});

test('a rules file broken while the daemon runs: runs are refused with its file:line:col until it is fixed; config.toml too', { timeout: 180_000 }, async (t) => {
  const d = await daemonForTest(t, { env: { GATE_SANDBOX_MODE: 'workspace-write', GATE_NO_AUTOSTART: '1' }, workspace: 'ws', rules: [] });
  const rules = join(d.env.GATE_HOME, 'rules', 'extra.rules');
  const reloadError = async (): Promise<string | null> => {
    const r = gate(['status', '--json'], d.env, d.ws);
    return (JSON.parse(r.stdout).policy.last_reload_error?.message as string | undefined) ?? null;
  };
  const before = await gateSh(['-c', 'touch one && echo one-wrote'], { env: d.env, cwd: d.ws });
  assert.equal(before.code, 0, before.stderr.toString());
  // what the user did: a forbidden touch rule with a typo on the next line, added mid-session
  writeFileSync(rules, 'prefix_rule(pattern=["touch"], decision="forbidden")\nprefix_rule(pattern=["ls" decision="allow")\n');
  await waitFor(async () => (await reloadError()) ?? undefined, 'the reload to fail');
  for (const entry of ENTRIES) {
    const r = await gateSh(['-c', `touch two-${entry.name} && echo two-wrote`], { env: { ...d.env, ...entry.env }, cwd: d.ws });
    assert.equal(r.code, 126, `${entry.name}: ${r.stderr}`);
    assert.equal(r.stdout.toString(), '');
    assert.match(r.stderr.toString(), new RegExp(`^gate-sh: a rules or config file is broken: ${rules.replace(/[.]/g, '\\.')}:2:\\d+: `));
    assert.ok(!existsSync(join(d.ws, `two-${entry.name}`)));
    // not only what the rule names: nothing runs
    const echo = await gateSh(['-c', 'echo harmless'], { env: { ...d.env, ...entry.env }, cwd: d.ws });
    assert.equal(echo.code, 126);
  }
  const st = gate(['status'], d.env, d.ws);
  assert.match(st.stdout, /reload error: .*extra\.rules:2:\d+: .*runs are refused until it is fixed/);
  // fixed: the forbidden rule is in force, everything else runs again
  writeFileSync(rules, 'prefix_rule(pattern=["touch"], decision="forbidden")\n');
  await waitFor(async () => ((await reloadError()) === null ? true : undefined), 'the reload to succeed');
  const denied = await gateSh(['-c', 'touch three'], { env: d.env, cwd: d.ws });
  assert.equal(denied.code, 126);
  assert.match(denied.stderr.toString(), /denied: touch three/);
  const ok = await gateSh(['-c', 'echo runs-again'], { env: d.env, cwd: d.ws });
  assert.equal(ok.code, 0, ok.stderr.toString());
  assert.equal(ok.stdout.toString(), 'runs-again\n');
  // a broken config.toml is refused the same way, with its line:col
  const conf = join(d.env.GATE_HOME, 'config.toml');
  writeFileSync(conf, 'approval_policy = "on-request"\nsandbox_mode = \n');
  await waitFor(async () => (await reloadError()) ?? undefined, 'the config reload to fail');
  const c = await gateSh(['-c', 'echo config-broken'], { env: d.env, cwd: d.ws });
  assert.equal(c.code, 126);
  assert.match(c.stderr.toString(), new RegExp(`a rules or config file is broken: ${conf.replace(/[.]/g, '\\.')}:2:\\d+`));
  rmSync(conf);
  await waitFor(async () => ((await reloadError()) === null ? true : undefined), 'the config to be fixed');
  const fine = await gateSh(['-c', 'echo config-fixed'], { env: d.env, cwd: d.ws });
  assert.equal(fine.stdout.toString(), 'config-fixed\n');
});
