import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodePreflightReply, encodeText, type Envelope } from '../../../src/protocol/codec.js';
import type { PreflightReply } from '../../../src/protocol/messages.js';

test('a pre-flight reply assembled from pre-encoded verdicts is the same text as encoding it whole', () => {
  const replies: PreflightReply[] = [
    {
      v: 1,
      id: 'id "with" quotes\\ and ünïcode \u2028',
      type: 'preflight',
      run_id: 'r-AbC_-123',
      action: { type: 'Escalate', execution: { type: 'Permissions', profile: { network: true, file_system: { write: ['/tmp/é'] } } } },
      complex: true,
      subcommands: [
        { argv: ['echo', 'a\nb', '"'], decision: 'allow', action: { type: 'Run' }, source: [{ kind: 'heuristic', name: 'safe' }] },
        {
          argv: ['rm', '-rf', '/'],
          decision: 'forbidden',
          action: { type: 'Deny', reason: 'nope "quoted"' },
          source: [{ kind: 'rule', file: '/r/a.rules', line: 3, pattern: ['rm'] }],
          approval_id: 'x',
        },
      ],
      sandbox: { type: 'workspace-write', writable_roots: ['/w'], network_access: false, exclude_tmpdir_env_var: false, exclude_slash_tmp: true },
    },
    { v: 1, id: 'i', type: 'preflight', run_id: 'r', action: { type: 'Run' }, complex: false, subcommands: [], sandbox: { type: 'danger-full-access' } },
  ];
  for (const r of replies) assert.equal(encodePreflightReply(r, JSON.stringify(r.subcommands)), encodeText(r as unknown as Envelope));
});
