/**
 * More real work through `gate-sh -lc` under the default policy (on-request, no rules, no approver), in
 * workspace-write and danger-full-access, each beside plain bash in the same folder written afresh: the same
 * exit status and output, nothing asked or denied (issue 29). The workflows are test/realwork/workflows.ts's;
 * a few of them also through `gate mcp`'s shell tool. A toolchain the machine lacks is skipped by name.
 * Found this way and fixed: `PYTHONPATH=src pytest` and the like were asked (and so denied); every run had
 * the terminal's job-control signals ignored (test/realwork/signals.test.ts).
 */
import { after, before, describe, test } from 'node:test';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import type { McpSession } from '../integrations/helpers.js';
import { openMcp, perMode, realworkDaemon, sameAsBash } from './helpers.js';
import { GIT_MORE, NODE_TOOLS, ONE_COMMAND_VARIABLES, SHELL_IDIOMS, WORKFLOWS, type Workflow } from './workflows.js';

after(killAll);

function check(d: () => DaemonProc, w: Workflow, mcp?: () => McpSession): void {
  test(w.name, async (t) => {
    if (w.missing) return t.skip(w.missing);
    await sameAsBash(d(), w, mcp ? { mcp: mcp() } : {});
  });
}

perMode('gate-sh -lc', (d) => {
  for (const w of WORKFLOWS) check(d, w);
});

describe('gate mcp, workspace-write', { timeout: 300_000 }, () => {
  let d: DaemonProc;
  let mcp: McpSession;
  before(async () => {
    d = await realworkDaemon('workspace-write');
    mcp = await openMcp(d);
  });
  after(async () => {
    await mcp?.close();
    await d?.close();
  });
  for (const w of [GIT_MORE, NODE_TOOLS, SHELL_IDIOMS, ONE_COMMAND_VARIABLES]) check(() => d, w, () => mcp);
});
