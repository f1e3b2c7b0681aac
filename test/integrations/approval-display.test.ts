/**
 * Every approval surface shows a spoofing command as what it is (issue 30, finding 8): an argument holding
 * a carriage return, `ESC[J` (erase the screen below), cursor-up, an OSC title, a bidi override and a
 * zero-width space. `gate approve` in a terminal once showed `command: git status` for a hidden `sh -c`.
 * Rendered here: `gate approve` and the daemon's own terminal (real daemons, in a pty), and the text of
 * the inline PTY approver (renderPrompt), the MCP elicitation, the JSON-RPC host request, the hook reason,
 * the denial lines. What is shown must hold no character a terminal would not show as itself, and bash
 * must read the shown words back as the very arguments.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { GATE, tempEnv } from '../helpers/env.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';
import { preflight, pty } from '../daemon/helpers.js';
import { gatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { displayCommand, displayWord, fit, hasHidden } from '../../src/text/display.js';
import { renderPrompt, promptCommand } from '../../src/client/prompt-view.js';
import { elicitationFor } from '../../src/integrations/elicitation.js';
import { approvalRequestParams } from '../../src/integrations/host-protocol.js';
import { hookOutput, unsandboxedDecision } from '../../src/integrations/hooks/decision.js';
import { shortCommand } from '../../src/daemon/answer.js';
import { denialLines } from '../../src/exec/client-plan.js';
import type { PromptEvent } from '../../src/protocol/approval.js';
import type { PreflightReply } from '../../src/protocol/messages.js';

after(killAll);

const CR_HIDE = 'rm -rf ~/.gate-sh/rules\r\x1b[J\x1b[1Agit status';
const OSC = '\x1b]0;approved\x07';
const BIDI = 'txt.\u202egnp';
const ZW = 'gi\u200bt';
/** the attack's script: its first word is `sh`, the rest hides behind control sequences */
const ARGV = ['sh', '-c', CR_HIDE, OSC, BIDI, ZW];

/** Bash's reading of a shown command: the words it stands for. */
function bashWords(shown: string): string[] {
  const r = spawnSync('bash', ['-c', `printf '%s\\0' ${shown}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\0').slice(0, -1);
}

function assertVisible(surface: string, text: string, opts: { lines?: boolean } = {}): void {
  const t = opts.lines ? text.replace(/\n/g, '') : text;
  assert.equal(hasHidden(t), false, `${surface} shows a hidden character: ${JSON.stringify(text)}`);
  for (const esc of ['\\r', '\\e[J', '\\e[1A', '\\e]0;approved\\a', '\\u202e', '\\u200b']) assert.ok(text.includes(esc), `${surface} lacks ${esc}: ${text}`);
}

const prompt: PromptEvent = {
  approval_id: 'ap-1',
  created_at: '2026-01-01T00:00:00Z',
  run_id: 'r-1',
  origin: 'exec',
  command: ARGV,
  display: displayCommand(ARGV),
  cwd: '/w\rork',
  reason: `approval needed for '${shortCommand(ARGV)}'`,
  available_decisions: ['approved', 'denied'],
};

test('display: the shown command holds no hidden character and bash reads it back as the same words', () => {
  const shown = displayCommand(ARGV);
  assertVisible('displayCommand', shown);
  assert.deepEqual(bashWords(shown), ARGV);
  assert.deepEqual(bashWords(displayCommand(['a b', "it's", '$HOME', '--x=1', '', 'ä'])), ['a b', "it's", '$HOME', '--x=1', '', 'ä']);
  assert.equal(displayWord('--message=hi'), '--message=hi');
  // U+00A0 looks like a space, U+2028 like a line end: both shown
  assert.equal(displayWord('a\u00a0b\u2028\u009b'), "$'a\\u00a0b\\u2028\\u009b'");
  assert.deepEqual(bashWords(displayCommand(['a\u00a0b\u2028\u009b', 'x\x7f'])), ['a\u00a0b\u2028\u009b', 'x\x7f']);
});

test('display: a long command is its head and tail with its length, never silently cut', () => {
  const long = ['echo', 'A'.repeat(5000), 'tail-word'];
  const shown = displayCommand(long);
  assert.ok(shown.length <= 2000, String(shown.length));
  assert.match(shown, /^echo A+ …\[5015 characters, \d+ not shown\]… A+ tail-word$/);
  assert.equal(fit('short', 100), 'short');
  const short = shortCommand(long);
  assert.ok(short.length <= 200 && short.endsWith('tail-word'), short);
});

test('display: every surface shows the spoofing argument visibly (renderPrompt, elicitation, host, hook, denials)', () => {
  const rendered = renderPrompt(prompt, 1);
  assertVisible('renderPrompt (gate approve, daemon terminal, PTY approver)', rendered, { lines: true });
  assert.match(rendered, /cwd: +\/w\\rork/);
  assertVisible('promptCommand (the daemon terminal\'s "next:" line)', promptCommand(prompt));
  // a prompt whose display came raw (an older daemon, another builder) is still shown visibly
  assertVisible('renderPrompt of a raw display', renderPrompt({ ...prompt, display: ARGV.join(' ') }), { lines: true });
  const el = elicitationFor(prompt).message;
  assertVisible('MCP elicitation', el, { lines: true });
  assert.equal(el.split('\n').length, 2, el); // the sentence and the reason: no line of the command's own
  const host = approvalRequestParams(prompt);
  assertVisible('JSON-RPC host command', String(host.command));
  assertVisible('JSON-RPC host reason', String(host.reason));
  assert.deepEqual(host.commandArgv, ARGV, 'the exact argv stays data');
  const forbidden: PreflightReply = {
    v: 1,
    id: 'x',
    type: 'preflight',
    run_id: 'r',
    action: { type: 'Deny', reason: 'x' },
    subcommands: [
      { argv: ARGV, decision: 'forbidden', action: { type: 'Deny', reason: `\`${shortCommand(ARGV)}\` rejected: ${CR_HIDE}` }, source: [] },
    ],
  } as unknown as PreflightReply;
  const hook = unsandboxedDecision(forbidden);
  assert.equal(hook.decision, 'deny');
  assertVisible('hook reason', hook.reason);
  assert.equal(hasHidden(JSON.stringify(hookOutput('claude-code', hook))), false);
  const lines = denialLines(forbidden as never, ARGV.join(' '));
  for (const l of lines) assertVisible('gate-sh denial line', l);
});

test('gate approve in a terminal shows the spoofing command visibly, and the screen is not erased', async () => {
  const d = await startDaemon({ args: ['--approval-policy', 'untrusted'] });
  const term = pty.spawn(process.execPath, [GATE, 'approve', '--name', 'alice'], { name: 'xterm', cols: 250, rows: 40, cwd: d.te.dir, env: d.te.env });
  let screen = '';
  term.onData((x) => (screen += x));
  const exited = new Promise((r) => term.onExit(r));
  try {
    await waitFor(() => (screen.includes("attached as 'alice'") ? true : undefined), `the console (screen: ${screen})`);
    const before = screen.length;
    // the very script of the attack: a `sh -c` whose visible tail says `git status`
    const script = `sh -c ${displayWord(CR_HIDE)} ${displayWord(OSC)} ${displayWord(BIDI)} ${displayWord(ZW)}`;
    const reply = preflight(d.paths, script, { cwd: d.te.dir });
    await waitFor(() => (screen.includes('[d] deny') ? true : undefined), `the prompt (screen: ${JSON.stringify(screen)})`);
    const shown = screen.slice(before);
    assert.ok(shown.includes(`command: ${displayCommand(ARGV)}`), JSON.stringify(shown));
    assert.doesNotMatch(shown, /\x1b\[J|\x1b\[1A|\x1b\]0|\u202e|\u200b|\r(?!\n)/);
    term.write('d');
    assert.equal((await reply).action.type, 'Deny');
  } finally {
    term.kill('SIGTERM');
    await exited;
    await d.stop();
    d.te.cleanup();
  }
});

test("the daemon's own terminal shows the spoofing command visibly", async () => {
  const te = tempEnv();
  const term = pty.spawn(process.execPath, [GATE, 'daemon', 'run', '--approval-policy', 'untrusted'], {
    name: 'xterm',
    cols: 250,
    rows: 40,
    cwd: te.dir,
    env: te.env,
  });
  let screen = '';
  term.onData((x) => (screen += x));
  const exited = new Promise((r) => term.onExit(r));
  try {
    const paths = gatePaths(te.env);
    await waitFor(() => pingDaemon(paths, 300), 'the foreground daemon');
    const before = screen.length;
    const reply = preflight(paths, `sh -c ${displayWord(CR_HIDE)} ${displayWord(OSC)} ${displayWord(BIDI)} ${displayWord(ZW)}`, { cwd: te.dir });
    await waitFor(() => (screen.includes('[d] deny') ? true : undefined), `the prompt (screen: ${JSON.stringify(screen)})`);
    const shown = screen.slice(before);
    assert.ok(shown.includes(`command: ${displayCommand(ARGV)}`), JSON.stringify(shown));
    assert.doesNotMatch(shown, /\x1b\[J|\x1b\[1A|\x1b\]0|\u202e|\u200b|\r(?!\n)/);
    term.write('d');
    assert.equal((await reply).action.type, 'Deny');
  } finally {
    term.kill('SIGTERM');
    await exited;
    te.cleanup();
  }
});
