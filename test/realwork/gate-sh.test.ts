/**
 * Real work through `gate-sh -lc` under the default policy (on-request, no rules, no approver), in
 * workspace-write and danger-full-access: each project's exit status and output are plain bash's, and
 * nothing is asked or denied (issue 29). Before issue 29, configure's and make clean's `rm -rf`, the
 * venv's activate, python -c / node -e / perl -e and `sh build.sh` were each asked, and so denied.
 */
import { after, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll } from '../helpers/daemon.js';
import { perMode, sameAsBash } from './helpers.js';
import { AUTOCONF, MAKEFILE, npmProject, ONE_LINERS, SH_SCRIPT, VENV } from './projects.js';

const tarballs = mkdtempSync(join(tmpdir(), 'g-rw-'));
after(() => (killAll(), rmSync(tarballs, { recursive: true, force: true })));

perMode('gate-sh -lc', (d) => {
  for (const p of [AUTOCONF, MAKEFILE, VENV, npmProject(tarballs), ONE_LINERS, SH_SCRIPT]) test(p.name, () => sameAsBash(d(), p).then(() => undefined));
});
