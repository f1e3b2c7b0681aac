/**
 * `gate mcp`'s calls run with the user's environment as the host had it (issue 31, point 5): a host that
 * starts gate mcp with a short environment, as Codex does, still has its user's VIRTUAL_ENV, NODE_OPTIONS,
 * ... in the calls; the variables that locate gate-sh's daemon come from gate mcp's own environment, and the
 * log says what was added and what was dropped and why. Real daemon, real `gate mcp` under a real bash
 * parent (the host), the SDK's own client.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import shellQuote from 'shell-quote';
import { GATE } from '../helpers/env.js';
import { killAll, startDaemon } from '../helpers/daemon.js';
import { callEnvironment, describeCallEnvironment } from '../../src/integrations/mcp-env.js';

after(killAll);

test('callEnvironment: the host\'s variables under gate mcp\'s own; where gate-sh is, only from its own', () => {
  const c = callEnvironment(
    { PATH: '/own/bin', GATE_HOME: '/g' },
    { PATH: '/host/bin', VIRTUAL_ENV: '/v', GATE_HOME: '/other', GATE_SESSION: 'other', XDG_RUNTIME_DIR: '/run/x', A_TOKEN: 't' },
    '/proc/1/environ',
  );
  assert.deepEqual(c.env, { VIRTUAL_ENV: '/v', A_TOKEN: 't', PATH: '/own/bin', GATE_HOME: '/g' });
  assert.deepEqual(c.added, ['A_TOKEN', 'VIRTUAL_ENV']);
  assert.deepEqual(
    c.dropped.map((d) => d.name),
    ['GATE_SESSION', 'XDG_RUNTIME_DIR'],
  );
  assert.match(describeCallEnvironment(c), /added from the host: A_TOKEN, VIRTUAL_ENV; dropped GATE_SESSION, XDG_RUNTIME_DIR: it says where gate-sh's daemon/);
});

test('a host that starts gate mcp with a short environment (as Codex does): the calls still have the user\'s variables', async () => {
  const d = await startDaemon({ workspace: 'w' });
  const own: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const k of ['HOME', 'GATE_HOME', 'GATE_SESSION', 'XDG_RUNTIME_DIR', 'CODEX_HOME', 'TMPDIR']) if (d.env[k] !== undefined) own[k] = d.env[k];
  // the host: a bash with the user's whole environment, which starts gate mcp with only `own` (and stays its parent)
  const user = { ...d.env, VIRTUAL_ENV: '/opt/venv-of-the-user', SSL_CERT_DIR: '/etc/ssl/user-certs', GATE_NO_AUTOSTART: '1' };
  const inner = shellQuote.quote(['env', '-i', ...Object.entries(own).map(([k, v]) => `${k}=${v}`), process.execPath, GATE, 'mcp']);
  const transport = new StdioClientTransport({ command: 'bash', args: ['-c', `${inner}; exit $?`], env: user, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (b) => (err += b));
  const client = new Client({ name: 'short-env-host', version: '1.0.0' });
  await client.connect(transport);
  try {
    const r = await client.callTool(
      { name: 'shell', arguments: { command: 'printf "%s|%s|%s" "$VIRTUAL_ENV" "$SSL_CERT_DIR" "${GATE_NO_AUTOSTART-unset}"', workdir: d.ws, login: false } },
      undefined,
      { timeout: 60_000 },
    );
    const out = JSON.parse((r.content as { text: string }[])[0].text);
    assert.equal(out.exit_code, 0, `${out.output}\n${err}`);
    // the user's variables are there; gate-sh's own (GATE_NO_AUTOSTART here) only as gate mcp had them
    assert.equal(out.output, '/opt/venv-of-the-user|/etc/ssl/user-certs|unset');
    assert.match(err, /calls run with the host's environment \(\/proc\/\d+\/environ\)/);
    assert.match(err, /added from the host: .*SSL_CERT_DIR.*VIRTUAL_ENV/);
    assert.match(err, /dropped .*GATE_NO_AUTOSTART.*: it says where gate-sh's daemon and rules are/);
  } finally {
    await client.close();
    await d.close();
  }
});
