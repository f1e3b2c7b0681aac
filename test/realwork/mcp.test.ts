/**
 * Real work through `gate mcp`'s shell tool (the SDK's own client, no elicitation: no approver), under the
 * default policy, in workspace-write and danger-full-access: each project's exit status and output
 * (stdout and stderr merged, as the tool gives them) are plain bash's, and nothing is asked (issue 29).
 */
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import type { McpSession } from '../integrations/helpers.js';
import { MODES, openMcp, realworkDaemon, sameAsBash } from './helpers.js';
import { AUTOCONF, MAKEFILE, npmProject, ONE_LINERS, SH_SCRIPT, VENV } from './projects.js';

const tarballs = mkdtempSync(join(tmpdir(), 'g-rw-'));
after(() => (killAll(), rmSync(tarballs, { recursive: true, force: true })));

for (const mode of MODES)
  describe(`gate mcp, ${mode}`, { timeout: 600_000 }, () => {
    let d: DaemonProc;
    let mcp: McpSession;
    before(async () => {
      d = await realworkDaemon(mode);
      mcp = await openMcp(d);
    });
    after(async () => {
      await mcp?.close();
      await d?.close();
    });
    for (const p of [AUTOCONF, MAKEFILE, VENV, npmProject(tarballs), ONE_LINERS, SH_SCRIPT])
      test(p.name, () => sameAsBash(d, p, { mcp }).then(() => undefined));
  });
