/**
 * Claude Code 2.1.197 end to end, the shell route (gate-sh as Claude Code's bash) (`claude -p`), driven by a scripted Anthropic Messages server on loopback,
 * after `gate setup claude-code` in a scratch HOME with gate-sh's default config and the team rules of
 * helpers.ts (`rm` forbidden, `git status` allowed). Run by `npm run test:agents`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit, gate, PLUMBING, runAgent, scratch } from './helpers.js';

const A = 'claude-code';

test('claude-code, shell route: gate-sh is the shell; allowed runs, rm denied with its reason, start-up never asked', async () => {
  const s = scratch(A);
  try {
    const set = gate(s, ['setup', 'claude-code']);
    assert.equal(set.code, 0, set.stderr);
    const doc = gate(s, ['doctor']);
    assert.equal(doc.code, 0, doc.stdout);
    assert.match(doc.stdout, /shell wired +CLAUDE_CODE_SHELL=.*\/\.gate-sh\/bin\/bash \(settings\.json env\) → gate-sh/);
    // an rm no pre-flight can see: make runs it (denied at exec time, the justification must still reach the model)
    writeFileSync(join(s.work, 'Makefile'), 'clean:\n\trm -rf somefile\n');
    // started as README.md says: claude --allowedTools Bash
    const commands = ['git status && echo ok', 'rm -rf somefile', 'echo "gated=${GATE_RUN:+yes}"', 'type find | head -1', 'make clean'];
    const run = await runAgent(A, s, commands, [], undefined, true);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.results.length, 5, JSON.stringify(run.results));
    assert.match(run.results[0].output, /On branch[\s\S]*\nok$/);
    assert.equal(run.results[0].isError, false, run.results[0].output);
    assert.match(run.results[1].output, /use trash instead/);
    assert.equal(run.results[1].isError, true);
    assert.equal(readFileSync(join(s.work, 'somefile'), 'utf8'), 'keep me\n');
    assert.equal(run.results[2].output, 'gated=yes'); // really gate-sh (it sets GATE_RUN), not a fallback
    // Claude Code's start-up snapshot is written from inside the shell into ~/.claude/shell-snapshots, the
    // one folder of HOME set-up makes writable (agent_writable_roots), and sourced before each command:
    // its functions are there (it shadows find with its own)
    assert.equal(run.results[3].output, 'find is a function');
    assert.match(run.results[4].output, /gate-sh: denied: rm -rf somefile: Execution forbidden by policy: use trash instead \(rule .*team\.rules:1\)/);
    assert.equal(run.results[4].isError, true);
    assert.match(
      readFileSync(join(s.home, '.gate-sh', 'config.toml'), 'utf8'),
      /^agent_writable_roots = \[".*\/\.claude\/shell-snapshots"\] # added by gate setup$/m,
    );
    // (d) nothing but the scripted rm was denied or asked about, start-up included
    const notAllowed = audit(s).filter((r) => r.kind === 'decision' && r.decision !== 'allow');
    assert.ok(notAllowed.length > 0 && notAllowed.every((r) => r.argv[0] === 'rm'), JSON.stringify(notAllowed, null, 1));
  } finally {
    s.cleanup();
  }
});

test('claude-code, shell route: a script with pipes, redirections, a heredoc and $(...) gives the model the bytes bash gives', async () => {
  const plain = scratch(A);
  const gated = scratch(A);
  try {
    const viaBash = await runAgent(A, plain, [PLUMBING], ['--allowedTools', 'Bash']);
    assert.equal(gate(gated, ['setup', 'claude-code']).code, 0);
    const viaGate = await runAgent(A, gated, [PLUMBING, 'echo "gated=${GATE_RUN:+yes}"'], ['--allowedTools', 'Bash']);
    assert.equal(viaBash.results.length, 1, JSON.stringify(viaBash.results));
    assert.equal(viaBash.results[0].output, '2\nlines=3\nA\nB\nC\ncannot access \'nothing-here\': No such file or directory');
    assert.equal(viaGate.results[0].output, viaBash.results[0].output);
    assert.equal(viaGate.results[1].output, 'gated=yes');
  } finally {
    plain.cleanup();
    gated.cleanup();
  }
});


test('claude-code: the hook route gives the same verdicts as the shell route', async () => {
  const s = scratch(A);
  try {
    // ssh is asked (a pipe into sh no longer is: it runs in the turn sandbox, the network off)
    const commands = ['git status && echo ok', 'rm -rf somefile', 'ssh -o BatchMode=yes 127.0.0.1 true'];
    assert.equal(gate(s, ['setup', 'claude-code']).code, 0);
    const viaShell = await runAgent(A, s, commands, ['--allowedTools', 'Bash']);
    const sw = gate(s, ['setup', 'claude-code', '--route', 'hook']); // switches the route
    assert.equal(sw.code, 0, sw.stderr);
    assert.match(sw.stdout, /route shell → hook/);
    const viaHook = await runAgent(A, s, commands);
    const verdict = (r: { output: string; isError?: boolean }) =>
      /use trash instead/.test(r.output)
        ? 'denied by rule'
        : /approval needed|requires approval|cannot be inspected|permission/i.test(r.output)
          ? 'asked'
          : r.isError
            ? 'error'
            : 'ran';
    assert.deepEqual(viaShell.results.map(verdict), ['ran', 'denied by rule', 'asked'], JSON.stringify(viaShell.results));
    assert.deepEqual(viaHook.results.map(verdict), ['ran', 'denied by rule', 'asked'], JSON.stringify(viaHook.results));
    assert.equal(viaHook.results[0].output.replace(/\nok$/, ''), viaShell.results[0].output.replace(/\nok$/, ''));
  } finally {
    s.cleanup();
  }
});
