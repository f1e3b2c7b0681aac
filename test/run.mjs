// Runs every compiled test file (dist/test/**/*.test.js) with node:test. Extra args filter by path substring.
// A test file that hangs fails by name after GATE_TEST_TIMEOUT_S (default 600 s: node's --test-timeout
// bounds each file's run) and the other files go on; a watchdog (GATE_TEST_WATCHDOG_S, default 1500 s)
// kills the whole run if it still hangs: CI fails, it never stalls.
// Before anything runs, the programs the suites use are looked for (README "Prerequisites"): when one is
// missing the run stops at once with the list and the apt-get line (GATE_TEST_NO_PREREQS=1 skips the check).
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { spawn } from 'node:child_process';

/** Debian package → a program it installs (found on PATH, or at this absolute path). */
const PREREQS = [
  ['bubblewrap', 'bwrap'],
  ['busybox-static', 'busybox', '/bin/busybox'],
  ['tmux', 'tmux'],
  ['util-linux', 'unshare'],
  ['autoconf', 'autoconf'],
  ['automake', 'automake'],
  ['python3-pytest', 'pytest-3'],
  ['git', 'git'],
  ['make', 'make'],
  ['gcc', 'gcc'],
  ['python3', 'python3'],
];

function executable(p) {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d && executable(join(d, name)));
}

if (process.env.GATE_TEST_NO_PREREQS !== '1') {
  const missing = PREREQS.filter(([, name, abs]) => !onPath(name) && !(abs && executable(abs)));
  if (missing.length) {
    console.error(`test/run.mjs: the tests need programs this machine lacks: ${missing.map(([pkg, name]) => `${name} (${pkg})`).join(', ')}`);
    console.error(`install them (Debian/Ubuntu): sudo apt-get install -y ${PREREQS.map(([pkg]) => pkg).join(' ')}`);
    console.error('nothing ran (GATE_TEST_NO_PREREQS=1 runs the suites anyway)');
    process.exit(1);
  }
}

function walk(dir, out = []) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
// test/realwork (real builds, installs and test suites side by side with bash: minutes) and the load tests
// of test/security/dos (20,000 connections, floods: minutes) run on their own, `npm run test:realwork` and
// `npm run test:load` (both in .ci/run), unless named
const apart = ['/realwork/', '/security/dos.test.js'];
const files = walk('dist/test')
  .filter((f) => (filters.length === 0 ? !apart.some((a) => f.includes(a)) : filters.some((x) => f.includes(x))))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const limit = Number(process.env.GATE_TEST_WATCHDOG_S || 1500);
// its own process group, so the watchdog can take every test process and daemon down with it
const perFile = Number(process.env.GATE_TEST_TIMEOUT_S || 600);
// test files one at a time unless GATE_TEST_CONCURRENCY says more: three at once take 12 min here
// instead of 17, but then one file's daemons starting and stopping change the host sockets another file's
// sandbox masks as it is built ("the session sandbox's mounts changed", bwrap "Can't mkdir parents" for a
// socket gone meanwhile): a product race, open, that side-by-side files make frequent
const concurrency = Math.max(1, Number(process.env.GATE_TEST_CONCURRENCY || 1));
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, `--test-timeout=${perFile * 1000}`, ...files], {
  stdio: 'inherit',
  detached: true,
});
const watchdog = setTimeout(() => {
  console.error(`\ntest watchdog: the suite ran longer than ${limit} s; killing it (a test is hanging)`);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
  process.exit(1);
}, limit * 1000);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => (process.kill(-child.pid, 'SIGKILL'), process.exit(130)));
child.on('exit', (code, signal) => {
  clearTimeout(watchdog);
  process.exit(code ?? (signal ? 1 : 0));
});
