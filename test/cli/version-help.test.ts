/** `gate-sh --version`, `gate --version` (package.json's version) and `gate-sh --help` (bash's layout, then gate-sh's own flags). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATE, GATE_SH, ROOT } from '../helpers/env.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
// both launchers are executables (bin/gate-sh is the native entry, which hands --help/--version to Node)
const run = (bin: string, args: string[]) => spawnSync(bin, args, { encoding: 'utf8', env: { ...process.env, GATE_NO_AUTOSTART: '1' } });

test("gate-sh --version and gate --version print package.json's version, run nothing and exit 0", () => {
  const sh = run(GATE_SH, ['--version']);
  assert.equal(sh.stdout, `gate-sh ${VERSION} (a gated GNU bash)\n`);
  assert.equal(sh.stderr, '');
  assert.equal(sh.status, 0);
  const g = run(GATE, ['--version']);
  assert.equal(g.stdout, `gate (gate-sh) ${VERSION}\n`);
  assert.equal(g.status, 0);
});

test("gate-sh --help: bash's usage layout, every long option gate-sh takes, and gate-sh's own flags", () => {
  const r = run(GATE_SH, ['--help']);
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  const bash = spawnSync('bash', ['--help'], { encoding: 'utf8' }).stdout;
  // the same layout as bash's own: version line, two Usage lines, then the option groups
  assert.match(
    bash,
    /^GNU bash, version .*\nUsage:\tbash \[GNU long option\] \[option\] \.\.\.\n\tbash \[GNU long option\] \[option\] script-file \.\.\.\nGNU long options:\n/,
  );
  assert.match(
    r.stdout,
    new RegExp(
      `^gate-sh ${VERSION.replace(/\./g, '\\.')} \\(a gated GNU bash\\)\nUsage:\tgate-sh \\[GNU long option\\] \\[option\\] \\.\\.\\.\n\tgate-sh \\[GNU long option\\] \\[option\\] script-file \\.\\.\\.\nGNU long options \\(as bash\\):\n`,
    ),
  );
  for (const o of [
    '--login',
    '--noprofile',
    '--norc',
    '--posix',
    '--rcfile FILE',
    '--init-file FILE',
    '--help',
    '--version',
    '-c command',
    '-o option',
    '-O shopt_option',
  ])
    assert.ok(r.stdout.includes(o), `${o} missing`);
  for (const o of ['--pty, --no-pty', '--escalate', '--with-permissions JSON', '--justification TEXT', '--sandbox MODE\\|JSON'])
    assert.match(r.stdout, new RegExp(`\\n\\t${o}\\t`), `${o} missing`);
  // the usage also follows a wrong option, on stderr, exit 2, as bash does
  const bad = run(GATE_SH, ['--no-such-option']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^gate-sh: --no-such-option: invalid option\nUsage:\tgate-sh /);
  assert.equal(bad.stdout, '');
});
