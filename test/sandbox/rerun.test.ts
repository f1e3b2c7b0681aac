// The on-failure rerun end to end: a real daemon (the turn sandbox from its preflight reply), a real
// approval console, real bubblewrap. A denial is asked about as an escalation and rerun as approved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { preflight } from '../daemon/helpers.js';
import { rerunDecision, rerunJustification } from '../../src/exec/sandbox-rerun.js';
import { denialReason, sandboxDenial } from '../../src/exec/sandbox-denial.js';
import { runCommandLine } from '../../src/exec/sandbox-run.js';
import { sandboxArgvFor, wrapCommand } from '../../src/sandbox/wrap.js';
import { gateSandboxContext } from '../../src/sandbox/gate-context.js';
import type { Action } from '../../src/protocol/action.js';
import type { SandboxPolicy } from '../../src/sandbox/policy.js';
import { BWRAP, consoleRig } from './helpers.js';

interface Attempt {
  status: number;
  stderr: string;
}

/** The on-failure rerun's steps as the run machine takes them (src/exec/run-call.ts): the denial the daemon
 * reads from the tail, the question with it as justification, the answer's meaning, the rerun. */
async function rerunOnDenial(o: {
  first: Attempt;
  ask: (justification: string) => Promise<Action>;
  rerun: (execution: Extract<Action, { type: 'Escalate' }>['execution']) => Promise<Attempt>;
  notice: (line: string) => void;
}): Promise<Attempt> {
  const denial = sandboxDenial(o.first.status, o.first.stderr);
  if (!denial) return o.first;
  const why = denialReason(denial);
  const action = await o.ask(rerunJustification(why));
  const offer = rerunDecision(action, why);
  if (offer.notice) o.notice(offer.notice);
  return offer.rerun && action.type === 'Escalate' ? o.rerun(action.execution) : o.first;
}

test('a sandbox denial is offered as an escalation and rerun as approved; a refusal keeps the failure', async (t) => {
  const { te, d, c, ws, outside } = await consoleRig(t);
  const ctx = gateSandboxContext({ cwd: ws, env: te.env });

  async function attempt(script: string, answer: string) {
    const first = await preflight(d.paths, script, { cwd: ws });
    assert.equal(first.action.type, 'Run', JSON.stringify(first));
    const turn = first.sandbox as SandboxPolicy;
    const run = (execution: Parameters<typeof sandboxArgvFor>[0]) =>
      runCommandLine(wrapCommand(['bash', '-c', script], sandboxArgvFor(execution, turn, ctx), BWRAP), {
        cwd: ws,
        env: te.env,
        command: ['bash'],
        stdio: 'pipe',
      });
    const notices: string[] = [];
    const result = await rerunOnDenial({
      first: await run({ type: 'TurnDefault' }),
      ask: async (justification: string) => {
        const reply = preflight(d.paths, script, { cwd: ws, sandbox_permissions: 'require_escalated', justification });
        const p = await c.next('prompt');
        assert.equal(p.sandbox_permissions, 'require_escalated', 'the approver is asked for an escalation');
        assert.match(justification, /read-only file system in the sandbox: cp: .*Read-only file system/);
        c.answer(p.approval_id, answer);
        return (await reply).action as Action;
      },
      rerun: run,
      notice: (l: string) => notices.push(l),
    });
    return { result, notices };
  }

  // a plain script: one subcommand, so the daemon's overall answer is that subcommand's escalation
  const ok = await attempt(`cp /etc/hostname ${outside}/f`, 'approved');
  assert.equal(ok.result.status, 0, JSON.stringify(ok));
  assert.equal(readFileSync(join(outside, 'f'), 'utf8'), readFileSync('/etc/hostname', 'utf8'));
  assert.match(ok.notices.join('\n'), /read-only file system in the sandbox: .*; rerunning as approved \(outside the sandbox\)/);

  const no = await attempt(`cp /etc/hostname ${outside}/g`, 'denied');
  assert.notEqual(no.result.status, 0);
  assert.ok(!existsSync(join(outside, 'g')));
  assert.match(no.notices.join('\n'), /not rerun/);
});
