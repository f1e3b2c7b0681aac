/**
 * gemini-cli 0.61.0 end to end (`gemini -p --yolo`), driven by a scripted Gemini streaming server on
 * loopback, after `gate setup gemini` in a scratch HOME with gate-sh's default config and the team rules
 * of helpers.ts (`rm` forbidden, `git status` allowed). Run by `npm run test:agents`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit, breakHook, checkHookRoute, gate, GEMINI_SETTINGS, geminiOutput, HOOK_ROUTE_CHECKS, PLUMBING, runAgent, scratch } from './helpers.js';

const A = 'gemini';

test('gemini, hook route: commands run through gate-sh (sandboxed, exec-gated), outputs reach the model; rm is denied by its rule', async () => {
  const s = scratch(A);
  try {
    const set = gate(s, ['setup', 'gemini', '--route', 'hook']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /hooks\.BeforeTool/);
    const settings = JSON.parse(readFileSync(join(s.home, '.gemini', 'settings.json'), 'utf8'));
    assert.equal(settings.security.auth.selectedType, 'gemini-api-key'); // the user's settings stay
    const doc = JSON.parse(gate(s, ['doctor', '--json']).stdout).find((r: { agent: string }) => r.agent === 'gemini');
    assert.equal(doc.routes.find((r: { route: string }) => r.route === 'hook').state, 'wired');
    // bounded (gemini -p ends by itself); generous for a loaded machine: 5 calls took up to 2 min under load 25
    const run = await runAgent(A, s, ['git status && echo ok', 'rm -rf somefile', ...HOOK_ROUTE_CHECKS], ['--yolo'], 300_000);
    assert.equal(run.results.length, 5, JSON.stringify(run.results) + run.stderr);
    assert.equal(run.code, 0, run.stderr);
    // gemini-cli says when a hook rewrote the command; the output is the command's own
    assert.match(geminiOutput(run.results[0].output), /Output: On branch[\s\S]*\nok\n<\/untrusted_context>[\s\S]*were modified by a hook/);
    assert.match(run.results[1].output, /gate-sh: denied: rm -rf somefile: `rm -rf somefile` rejected: use trash instead[\s\S]*Exit Code: 126/);
    checkHookRoute(run.results.slice(2).map((r) => r.output));
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
  } finally {
    s.cleanup();
  }
});

test('gemini, hook route: a gate hook that cannot even load blocks the command (exit 2), it never lets it run', async () => {
  const s = scratch(A);
  try {
    assert.equal(gate(s, ['setup', 'gemini', '--route', 'hook']).code, 0);
    breakHook(s, A);
    const run = await runAgent(A, s, ['rm -rf somefile', 'echo ran > marker'], ['--yolo'], 300_000);
    assert.equal(run.results.length, 2, JSON.stringify(run.results) + run.stderr);
    for (const r of run.results) assert.match(r.output, /gate-sh: hook: .*; nothing runs/);
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
    assert.equal(existsSync(join(s.work, 'marker')), false);
  } finally {
    s.cleanup();
  }
});

test('gemini: setup is idempotent; --undo gives back the settings file byte for byte; doctor sees the PATH as gemini does', async () => {
  const s = scratch(A);
  try {
    const file = join(s.home, '.gemini', 'settings.json');
    assert.equal(gate(s, ['setup', 'gemini']).code, 0);
    assert.match(gate(s, ['setup', 'gemini']).stdout, /nothing to change/);
    const entry = join(s.home, '.gate-sh', 'bin', 'bash');
    assert.equal(existsSync(entry), true);
    assert.equal(gate(s, ['setup', '--undo', 'gemini']).code, 0);
    assert.equal(readFileSync(file, 'utf8'), GEMINI_SETTINGS);
    assert.equal(existsSync(entry), false);
    // the shell route alone (the hook route would gate a plain start too, by rewriting each command)
    assert.equal(gate(s, ['setup', 'gemini', '--route', 'shell']).code, 0);
    // the shell route needs the entry point first on gemini's PATH: doctor applies gemini's own rule, as
    // README.md starts gemini (the alias), and says what a plain start from this PATH would find
    const without = gate(s, ['doctor']);
    assert.equal(without.code, 0, without.stdout);
    assert.match(
      without.stdout,
      /shell wired +when started as README\.md says \(PATH=.*\.gate-sh\/bin:\$PATH gemini\) it runs .*\.gate-sh\/bin\/bash → gate-sh; started plainly from this shell it would find \/\S+\/bash: keep the alias/,
    );
    const withPath = { ...s, env: { ...s.env, PATH: `${join(s.home, '.gate-sh', 'bin')}:${s.env.PATH}` } };
    assert.match(gate(withPath, ['doctor']).stdout, /shell wired +gemini-cli runs 'bash' found on PATH: .*\.gate-sh\/bin\/bash → gate-sh/);
    // the doctor's words are gemini's own: started plainly the real gemini runs another bash, with the alias
    // gate-sh (gate-sh sets GATE_RUN, bash does not)
    const gated = /Output: (gated=\w*)\n/;
    const viaPlain = await runAgent(A, s, ['echo "gated=${GATE_RUN:+yes}"'], ['--yolo'], 300_000);
    assert.equal(gated.exec(geminiOutput(viaPlain.results[0]?.output ?? ''))?.[1], 'gated=', JSON.stringify(viaPlain.results) + viaPlain.stderr);
    const withIt = await runAgent(A, withPath, ['echo "gated=${GATE_RUN:+yes}"'], ['--yolo'], 300_000);
    assert.equal(gated.exec(geminiOutput(withIt.results[0]?.output ?? ''))?.[1], 'gated=yes', JSON.stringify(withIt.results) + withIt.stderr);
    assert.equal(gate(s, ['setup', '--undo', 'gemini']).code, 0);
    assert.equal(readFileSync(file, 'utf8'), GEMINI_SETTINGS);
    assert.equal(existsSync(entry), false);
  } finally {
    s.cleanup();
  }
});

test('gemini, shell route (its PATH): allowed runs, rm denied with its reason, start-up never asked, plumbing as bash gives it', async () => {
  const plain = scratch(A);
  const s = scratch(A);
  try {
    // generous bounds: gemini relaunches itself (as users run it) and this machine may be loaded
    const viaBash = await runAgent(A, plain, [PLUMBING], ['--yolo'], 300_000);
    const set = gate(s, ['setup', 'gemini', '--route', 'shell']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /PATH=.*\.gate-sh\/bin:\$PATH gemini/);
    // started as README.md says: PATH=~/.gate-sh/bin:$PATH gemini
    const run = await runAgent(A, s, ['git status && echo ok', 'rm -rf somefile', 'echo "gated=${GATE_RUN:+yes}"', PLUMBING], ['--yolo'], 300_000, true);
    assert.equal(run.results.length, 4, JSON.stringify(run.results) + run.stderr);
    const out = run.results.map((r) => geminiOutput(r.output));
    assert.match(out[0], /Output: On branch[\s\S]*\nok\n<\/untrusted_context>$/);
    assert.match(out[1], /gate-sh: denied: rm -rf somefile: `rm -rf somefile` rejected: use trash instead[\s\S]*Exit Code: 126/);
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
    assert.match(out[2], /Output: gated=yes\n/);
    assert.equal(out[3], geminiOutput(viaBash.results[0].output));
    const notAllowed = audit(s).filter((r) => r.kind === 'decision' && r.decision !== 'allow');
    assert.ok(notAllowed.length > 0 && notAllowed.every((r) => r.argv[0] === 'rm'), JSON.stringify(notAllowed, null, 1));
  } finally {
    plain.cleanup();
    s.cleanup();
  }
});

test('gemini: the hook route gives the same verdicts as the shell route', async () => {
  const s = scratch(A);
  try {
    // ssh is asked (a pipe into sh no longer is: it runs in the turn sandbox, the network off)
    const asked = 'ssh -o BatchMode=yes 127.0.0.1 true; touch asked-ran';
    const commands = ['git status && echo ok', 'rm -rf somefile', asked];
    assert.equal(gate(s, ['setup', 'gemini', '--route', 'shell']).code, 0);
    const viaShell = await runAgent(A, s, commands, ['--yolo'], 300_000, true);
    const sw = gate(s, ['setup', 'gemini', '--route', 'hook']); // switches the route
    assert.equal(sw.code, 0, sw.stderr);
    const viaHook = await runAgent(A, s, commands, ['--yolo'], 300_000);
    const verdict = (r: { output: string }) =>
      /use trash instead/.test(r.output) ? 'denied by rule' : /approval needed/.test(r.output) ? 'asked' : /Output: On branch/.test(r.output) ? 'ran' : r.output;
    // shell route, no approver: gate-sh asks, and the prompt is denied at once with its reason
    assert.deepEqual(viaShell.results.map(verdict), ['ran', 'denied by rule', 'asked'], JSON.stringify(viaShell.results));
    // hook route: the same, since gate-sh runs every call; no hook "ask", on which gemini -p (relaunched,
    // as users run it) waited for ever (issue 31 point 1); runAgent's time-out bounds the run
    assert.deepEqual(viaHook.results.map(verdict), ['ran', 'denied by rule', 'asked'], JSON.stringify(viaHook.results));
    assert.equal(viaHook.code, 0, viaHook.stderr);
    assert.equal(existsSync(join(s.work, 'asked-ran')), false, 'the asked command never ran');
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
  } finally {
    s.cleanup();
  }
});
