import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GATE, tempEnv } from '../helpers/env.js';
import { gatePaths } from '../../src/paths/paths.js';
import { pingDaemon } from '../../src/transport/ping.js';
import { preflight, pty } from './helpers.js';
import { waitFor } from '../helpers/daemon.js';

test('gate daemon run in a terminal: prompts show there and one key answers them', async () => {
  const te = tempEnv();
  const term = pty.spawn(process.execPath, [GATE, 'daemon', 'run', '--approval-policy', 'untrusted'], {
    name: 'xterm',
    cols: 200,
    rows: 40,
    cwd: te.dir,
    env: te.env,
  });
  let screen = '';
  term.onData((d) => (screen += d));
  const exited = new Promise((r) => term.onExit(r));
  try {
    const paths = gatePaths(te.env);
    await waitFor(() => pingDaemon(paths, 300), 'the foreground daemon');
    const st = await waitFor(async () => ((await import('../../src/client/approval-client.js')).approvalCall(paths, 'status')), 'status');
    assert.deepEqual((st.status as any).approvers, ['terminal']);
    const reply = preflight(paths, 'make deploy');
    await waitFor(() => (screen.includes('command: make deploy') ? true : undefined), `the prompt on the terminal (screen: ${screen})`);
    assert.match(screen, /\[a\] approve +\[s\] approve for this session/);
    term.write('z'); // not offered: said so, nothing decided
    await waitFor(() => (screen.includes("key 'z' is not offered") ? true : undefined), 'the refusal of z');
    term.write('a');
    const r = await reply;
    assert.equal(r.action.type, 'Run');
    assert.equal(r.subcommands[0].source.at(-1).approver, 'terminal');
  } finally {
    term.kill('SIGTERM');
    await exited;
    te.cleanup();
  }
});
