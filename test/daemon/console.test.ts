import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE } from '../helpers/env.js';
import { preflight, pty } from './helpers.js';
import { killAll, startDaemon, waitFor } from '../helpers/daemon.js';

after(killAll);

test('gate approve (interactive): shows command, cwd, reason, rule and the exact amendment line; p saves it', async () => {
  const d = await startDaemon({ args: ['--approval-policy', 'untrusted'] });
  const term = pty.spawn(process.execPath, [GATE, 'approve', '--name', 'alice'], { name: 'xterm', cols: 220, rows: 40, cwd: d.te.dir, env: d.te.env });
  let screen = '';
  term.onData((x) => (screen += x));
  const exited = new Promise((r) => term.onExit(r));
  try {
    await waitFor(() => (screen.includes("attached as 'alice'") ? true : undefined), `the console (screen: ${screen})`);
    const reply = preflight(d.paths, 'cargo fmt --check', { cwd: '/srv' });
    await waitFor(() => (screen.includes('command: cargo fmt --check') ? true : undefined), 'the prompt');
    assert.match(screen, /cwd: +\/srv/);
    assert.match(screen, /rule: +heuristic:/);
    assert.match(screen, /saves: +prefix_rule\(pattern=\["cargo", "fmt", "--check"\], decision="allow"\)/);
    assert.match(screen, /\[p\] approve and save the rule/);
    term.write('p');
    const r = await reply;
    assert.equal(r.action.type, 'Run');
    assert.equal(r.subcommands[0].source.at(-1).approver, 'alice');
    assert.equal(
      readFileSync(join(d.te.env.CODEX_HOME, 'rules', 'default.rules'), 'utf8'),
      'prefix_rule(pattern=["cargo", "fmt", "--check"], decision="allow")\n',
    );
    await waitFor(() => (screen.includes('approved_execpolicy_amendment by alice') ? true : undefined), 'the resolution on screen');
  } finally {
    term.kill('SIGTERM');
    await exited;
    await d.stop();
    d.te.cleanup();
  }
});
