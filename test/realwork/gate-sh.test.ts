/**
 * Real work through `gate-sh -lc` under the default policy (on-request, no rules, no approver), in
 * workspace-write and danger-full-access: each project's exit status and output are plain bash's, and
 * nothing is asked or denied (issue 29). Before issue 29, configure's and make clean's `rm -rf`, the
 * venv's activate, python -c / node -e / perl -e and `sh build.sh` were each asked, and so denied.
 */
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll, type DaemonProc } from '../helpers/daemon.js';
import { MODES, realworkDaemon, sameAsBash } from './helpers.js';
import { AUTOCONF, MAKEFILE, npmProject, ONE_LINERS, SH_SCRIPT, VENV } from './projects.js';

const tarballs = mkdtempSync(join(tmpdir(), 'g-rw-'));
after(() => (killAll(), rmSync(tarballs, { recursive: true, force: true })));

for (const mode of MODES)
  describe(`gate-sh -lc, ${mode}`, { timeout: 600_000 }, () => {
    let d: DaemonProc;
    before(async () => {
      d = await realworkDaemon(mode);
    });
    after(() => d?.close());
    for (const p of [AUTOCONF, MAKEFILE, VENV, npmProject(tarballs), ONE_LINERS, SH_SCRIPT]) test(p.name, () => sameAsBash(d, p).then(() => undefined));
  });
