/**
 * An escalated command that runs in the turn sandbox (Escalate(TurnDefault), spawned by the daemon's
 * escalation runner) under network "rules" gets its run's proxy route like the run itself (issue 33): the
 * bridge before it, the proxy variables, the run's proxy folder bound in. The realistic case: the start-up
 * execs of a run that left the sandbox (an approved --escalate) go back into the turn sandbox one by one,
 * each escalated. And the exec gate's third expected program (the bridge's command) opens nothing: a
 * sandboxed script that starts the bridge itself with a forbidden command gets it denied.
 * Real daemon, gate-sh, bubblewrap, exec gate, proxy; servers on 127.0.0.x only (servers.ts).
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditLines, type DaemonProc } from '../helpers/daemon.js';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { run } from '../helpers/run.js';
import { RULES, type World, worldAndDaemon } from './servers.js';

const CONFIG = 'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\nnetwork_access = "rules"\n';

let w: World;
let d: DaemonProc;
let close = async (): Promise<void> => {};
// the home is outside every folder the sandbox can write (a start-up file there keeps its phase)
const home = mkdtempSync('/var/tmp/gate-home-');

before(async () => {
  const rules = [...RULES, 'prefix_rule(pattern=["rm"], decision="forbidden")'];
  ({ w, d, close } = await worldAndDaemon('gnete-', (world) => {
    writeFileSync(
      join(home, '.profile'),
      `curl -sS -f http://web.test:${world.webPort}/hello\ncurl -sS -f http://denied.test:${world.webPort}/hello\necho "profile curl: $?"\n`,
    );
    return { config: CONFIG, rules, workspace: 'ws', autoApprove: true, env: { HOME: home } };
  }));
});

after(async () => {
  await close();
  rmSync(home, { recursive: true, force: true });
});

function audit(): Record<string, any>[] {
  return auditLines<Record<string, any>>(join(d.env.GATE_HOME, 'audit.jsonl'));
}

test('an escalated TurnDefault command (a start-up exec of an escalated run) reaches allowed hosts through the run\'s proxy; a denied host is refused with the reason', { timeout: 120_000 }, async () => {
  // complex (a substitution): an approved escalation keeps bash outside, and the profile's execs go back
  // into the turn sandbox one by one, each Escalate(TurnDefault)
  const r = await run(GATE_SH, ['--escalate', '-lc', 'x=$(printf script); echo "$x"'], { env: d.env, cwd: d.ws, timeoutMs: 90_000 });
  assert.equal(r.stdout, `hello from web.test via web.test:${w.webPort}\nprofile curl: 22\nscript\n`, r.stderr);
  assert.ok(r.stderr.includes(`gate-sh: network: denied denied.test:${w.webPort}: `), r.stderr);
  // each curl decided Escalate(TurnDefault) and run by the escalation runner (its record: the exit status)
  const curls = audit().filter((a) => a.kind === 'exec' && String(a.argv?.[0]).endsWith('/curl'));
  assert.deepEqual(
    curls.filter((c) => c.phase === 'start-up').map((c) => c.action),
    ['Escalate(TurnDefault)', 'Escalate(TurnDefault)'],
  );
  assert.deepEqual(
    curls.filter((c) => c.detail === 'escalated run').map((c) => [c.execution, c.exit_status]),
    [
      ['TurnDefault', 0],
      ['TurnDefault', 22],
    ],
  );
  const net = audit().filter((a) => a.kind === 'network' && a.detail !== 'closed');
  assert.ok(net.some((a) => a.host === 'web.test' && a.decision === 'allow'));
  assert.ok(net.some((a) => a.host === 'denied.test' && a.decision === 'deny'));
});

test('the bridge started by a sandboxed script runs its command only as the exec gate decides: echo runs, a forbidden rm does not', { timeout: 60_000 }, async () => {
  const victim = join(d.ws, 'victim');
  writeFileSync(victim, 'x\n');
  const bridge = join(ROOT, 'shims', 'gate-netbridge');
  const r = await run(GATE_SH, ['-c', `${bridge} 3130 /nonexistent/proxy.sock -- /bin/echo allowed; ${bridge} 3131 /nonexistent/proxy.sock -- /bin/rm -f ${victim}; echo "rm: $?"`], {
    env: d.env,
    cwd: d.ws,
    timeoutMs: 60_000,
  });
  assert.match(r.stdout, /^allowed\nrm: 126\n$/, r.stderr);
  assert.ok(existsSync(victim), 'the forbidden rm did not run');
  assert.match(r.stderr, /denied/);
});
