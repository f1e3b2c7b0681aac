/**
 * The risk assessor: one real assessor program whose behaviour depends on the command it is asked about
 * (a good answer, slow > 5 s, crash, garbage, wrong shape). The prompt always appears (with the assessment
 * only when it was good), in `gate approve` and `gate host` alike; decisions never change.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approveConsole } from '../daemon/helpers.js';
import { gateSh } from '../shell/helpers.js';
import { hostProcess } from './helpers.js';
import { tempEnv } from '../helpers/env.js';
import { renderPrompt } from '../../src/client/prompt-view.js';
import type { PromptEvent } from '../../src/protocol/approval.js';
import { killAll, startDaemon } from '../helpers/daemon.js';

after(killAll);

const ASSESSOR = `
import { appendFileSync, readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
appendFileSync(process.env.ASSESSOR_LOG, JSON.stringify(input) + '\\n');
const what = input.command.at(-1);
if (what === 'good') console.log(JSON.stringify({ summary: 'creates one empty file', risk_level: 'low' }));
else if (what === 'high') console.log(JSON.stringify({ summary: 'scary', risk_level: 'high' }));
else if (what === 'slow') setTimeout(() => console.log(JSON.stringify({ summary: 'late', risk_level: 'low' })), 8000);
else if (what === 'crash') { console.log(JSON.stringify({ summary: 'x', risk_level: 'low' })); process.exit(3); }
else if (what === 'garbage') console.log('definitely not json');
else if (what === 'shape') console.log(JSON.stringify({ summary: 'x', risk_level: 'catastrophic' }));
`;

test('risk assessor: shown in every frontend when it answers; slow, crashing, garbage or wrong shape → the prompt appears without it; decisions unchanged', {
  timeout: 180_000,
}, async () => {
  const te = tempEnv();
  const rules = `prefix_rule(pattern=["touch"], decision="prompt", justification="creates files")\nprefix_rule(pattern=["rm"], decision="forbidden")\n`;
  const w = join(te.dir, 'w');
  mkdirSync(w);
  const script = join(te.dir, 'assessor.mjs');
  writeFileSync(script, ASSESSOR);
  const log = join(te.dir, 'assessor.log');
  te.env.ASSESSOR_LOG = log;
  const d = await startDaemon({ te, rulesFile: 'team.rules', rules, config: `risk_assessor = ${JSON.stringify([process.execPath, script])}\n` });
  const c = await approveConsole(te.env, 'human');
  const h = hostProcess(te.env);
  try {
    await h.call('initialize', {});
    // a good answer: in the console's prompt event, the host's request and the terminal rendering
    let ran = gateSh(['-c', 'touch good'], { env: te.env, cwd: w });
    let p = await c.next('prompt');
    assert.deepEqual(p.risk_assessment, { summary: 'creates one empty file', risk_level: 'low' });
    const req = await h.next((m) => m.method === 'item/commandExecution/requestApproval', 'the host request');
    assert.deepEqual(req.params.riskAssessment, { summary: 'creates one empty file', riskLevel: 'low' });
    assert.match(renderPrompt(p as unknown as PromptEvent), /\n {3}risk: {4}low: creates one empty file\n/);
    c.answer(p.approval_id, 'approved');
    let r = await ran;
    assert.equal(r.code, 0, r.stderr.toString());
    const input = JSON.parse(readFileSync(log, 'utf8').split('\n')[0]);
    assert.deepEqual(input.command, ['touch', 'good']);
    assert.equal(input.cwd, w);
    assert.match(input.reason, /creates files/);
    assert.match(input.matched_rule, /team\.rules:1$/);

    // "high" never denies by itself; the human's answer decides
    ran = gateSh(['-c', 'touch high'], { env: te.env, cwd: w });
    p = await c.next('prompt');
    assert.equal(p.risk_assessment.risk_level, 'high');
    c.answer(p.approval_id, 'approved');
    assert.equal((await ran).code, 0);

    // failures: the prompt still appears, without an assessment; approving still runs, denying still denies
    for (const [what, why, answer] of [
      ['slow', /no answer within 5 s/, 'approved'],
      ['crash', /exit status 3/, 'denied'],
      ['garbage', /output is not JSON/, 'approved'],
      ['shape', /risk_level must be low, medium or high/, 'denied'],
    ] as const) {
      ran = gateSh(['-c', `touch ${what}`], { env: te.env, cwd: w });
      p = await c.next('prompt');
      assert.equal(p.display, `touch ${what}`);
      assert.equal(p.risk_assessment, undefined, what);
      c.answer(p.approval_id, answer);
      r = await ran;
      assert.equal(r.code, answer === 'approved' ? 0 : 126, `${what}: ${r.stderr}`);
      assert.equal(existsSync(join(w, what)), answer === 'approved');
      assert.match(d.output(), why);
    }
    // forbidden: nobody is asked, so the assessor is not run either
    const before = readFileSync(log, 'utf8').split('\n').length;
    r = await gateSh(['-c', 'rm -f x'], { env: te.env, cwd: w });
    assert.equal(r.code, 126);
    assert.equal(readFileSync(log, 'utf8').split('\n').length, before);
  } catch (err) {
    process.stderr.write(`--- daemon:\n${d.output()}\n`);
    throw err;
  } finally {
    await h.close();
    await c.close();
    await d.stop();
    te.cleanup();
  }
});
