// Permissions(profile) under real bubblewrap: exactly the declared reads and writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { box } from './helpers.js';
import { permissionProfileArgv } from '../../src/sandbox/bwrap-argv.js';

test('profile with restricted reads: listed folders readable, the rest of the user\'s files invisible; writes only where declared', (t) => {
  const b = box();
  t.after(b.cleanup);
  const [rd, wr, secret] = ['rd', 'wr', 'secret'].map((n) => join(b.dir, n));
  for (const d of [rd, wr, secret]) mkdirSync(d);
  writeFileSync(join(rd, 'in'), 'data\n');
  writeFileSync(join(secret, 'key'), 'hunter2\n');
  const args = permissionProfileArgv({ file_system: { read: [rd], write: [wr] } }, b.ctx());
  const r = b.run(args, [
    `cat ${rd}/in`,
    `cat ${secret}/key || echo no-secret`,
    `echo out > ${wr}/o && echo wrote`,
    `echo x > ${rd}/x || echo rd-ro`,
    `ls ${b.ws} >/dev/null 2>&1 || echo no-ws`,
    'pwd',
    `echo t > /tmp/t && echo private-tmp`,
  ].join('; '));
  assert.equal(r.out, `data\nno-secret\nwrote\nrd-ro\nno-ws\n/\nprivate-tmp\n`, r.err);
  assert.equal(readFileSync(join(wr, 'o'), 'utf8'), 'out\n');
  assert.ok(!existsSync(join(rd, 'x')));
});

test('profile with network and default reads: everything readable, nothing writable but the declared path', (t) => {
  const b = box();
  t.after(b.cleanup);
  const wr = join(b.dir, 'wr');
  mkdirSync(wr);
  const r = b.run(
    permissionProfileArgv({ network: true, file_system: { write: [wr] } }, b.ctx()),
    `cat ${b.ws}/.git/config; echo x > ${wr}/f && echo wrote; echo x > ${b.ws}/f || echo ws-ro; pwd`,
  );
  assert.equal(r.out, `[core]\nwrote\nws-ro\n${b.ws}\n`, r.err);
});
