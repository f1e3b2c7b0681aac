/**
 * Issue 32, finding 8 (the part done here): `gate -v` / `gate version` print the version as --version does,
 * and `gate help <command>` shows that command's own help, not the top-level one. Real `gate`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { GATE } from '../helpers/env.js';

const gate = (args: string[]) => spawnSync(process.execPath, [GATE, ...args], { encoding: 'utf8' });

test('gate -v, gate version and gate help <command>', () => {
  const v = gate(['--version']);
  assert.equal(v.status, 0);
  for (const alias of ['-v', 'version']) assert.deepEqual([gate([alias]).status, gate([alias]).stdout], [0, v.stdout], alias);
  for (const cmd of ['daemon', 'config', 'reload']) {
    const h = gate(['help', cmd]);
    assert.equal(h.status, 0, h.stderr);
    assert.equal(h.stdout, gate([cmd, '--help']).stdout, cmd);
    assert.match(h.stdout, new RegExp(`^usage: gate ${cmd}`));
  }
  assert.match(gate(['help']).stdout, /^usage: gate <command>/);
});
