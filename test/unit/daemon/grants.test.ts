// Escalation grants: one-time, expiring, and bounded when shims never come to redeem them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GrantTable, type EscalationGrant } from '../../../src/daemon/escalation.js';

const grant = (token: string, expires_at: number): EscalationGrant => ({
  token,
  run_id: 'r',
  program: '/bin/true',
  argv: ['true'],
  cwd: '/',
  execution: { type: 'Unsandboxed' },
  expires_at,
});

test('grants: redeemed once, not after expiry, and unredeemed ones do not pile up', () => {
  let now = 1_000;
  const t = new GrantTable(() => now);
  t.grant(grant('a', now + 30_000));
  assert.equal(t.redeem('a')?.token, 'a');
  assert.equal(t.redeem('a'), undefined, 'one time');
  t.grant(grant('b', now + 30_000));
  now += 30_001;
  assert.equal(t.redeem('b'), undefined, 'expired');
  for (let i = 0; i < 5_000; i++) {
    t.grant(grant(`g${i}`, now + 30_000));
    now += 10;
  }
  // 30 s of grants live at any time: 3,000 at 10 ms apart, the older ones gone without a redeem
  assert.ok(t.size <= 3_001, String(t.size));
  assert.equal(t.redeem('g4999')?.token, 'g4999');
  assert.equal(t.redeem('g0'), undefined);
});
