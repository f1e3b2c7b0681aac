/**
 * The escalated run's environment (src/daemon/escalation-env.ts, issue 30 finding 3): the user's own HOME and
 * XDG_* (the daemon's), git's variables dropped but for identity and harmless switches. Pure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escalationEnv } from '../../../src/daemon/escalation-env.js';

const LIB = '/opt/gate/libgate.so';

test("escalated: HOME and XDG_* are the user's own, git's code-loading variables go, identity stays", () => {
  const sent = [
    'HOME=/ws/h',
    'XDG_CONFIG_HOME=/ws/x',
    'XDG_DATA_HOME=/ws/d',
    'GIT_CONFIG_GLOBAL=/ws/gc',
    'GIT_CONFIG_COUNT=1',
    'GIT_DIR=/ws/evil',
    'GIT_TRACE=/ws/trace',
    'GIT_AUTHOR_NAME=A',
    'GIT_COMMITTER_EMAIL=a@x',
    'GIT_PAGER=cat',
    'GIT_TERMINAL_PROMPT=0',
    'PATH=/usr/bin',
    'TERM=xterm',
  ];
  const user = { HOME: '/home/u', XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: '/home/u/.local/share', PATH: '/usr/bin' };
  const { env, corrected } = escalationEnv({ sent, decided: { PATH: '/usr/bin' }, lib: LIB, fallbackPath: '/bin', user });
  assert.deepEqual(env, {
    HOME: '/home/u',
    XDG_DATA_HOME: '/home/u/.local/share',
    GIT_AUTHOR_NAME: 'A',
    GIT_COMMITTER_EMAIL: 'a@x',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    PATH: '/usr/bin',
    TERM: 'xterm',
  });
  assert.deepEqual(corrected.sort(), ['GIT_CONFIG_COUNT', 'GIT_CONFIG_GLOBAL', 'GIT_DIR', 'GIT_TRACE', 'HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME']);
});

test('escalated: a git variable a person approved (it was in the decision) stays; without the user env nothing changes', () => {
  const { env } = escalationEnv({ sent: ['GIT_DIR=/r/.git', 'HOME=/h'], decided: { GIT_DIR: '/r/.git' }, lib: LIB, fallbackPath: '/bin', user: { HOME: '/h' } });
  assert.deepEqual(env, { GIT_DIR: '/r/.git', HOME: '/h' });
  const old = escalationEnv({ sent: ['HOME=/ws/h'], lib: LIB, fallbackPath: '/bin' });
  assert.deepEqual(old.env, { HOME: '/ws/h' });
});
