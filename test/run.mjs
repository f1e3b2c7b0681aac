// Runs every compiled test file (dist/test/**/*.test.js) with node:test. Extra args filter by path substring.
// A test file that hangs fails by name after GATE_TEST_TIMEOUT_S (default 600 s: node's --test-timeout
// bounds each file's run) and the other files go on; a watchdog (GATE_TEST_WATCHDOG_S, default 1500 s)
// kills the whole run if it still hangs: CI fails, it never stalls.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

function walk(dir, out = []) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
// test/realwork (real builds, installs and test suites side by side with bash: minutes) runs on its own,
// `npm run test:realwork`, unless named
const files = walk('dist/test')
  .filter((f) => (filters.length === 0 ? !f.includes('/realwork/') : filters.some((x) => f.includes(x))))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const limit = Number(process.env.GATE_TEST_WATCHDOG_S || 1500);
// its own process group, so the watchdog can take every test process and daemon down with it
const perFile = Number(process.env.GATE_TEST_TIMEOUT_S || 600);
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', `--test-timeout=${perFile * 1000}`, ...files], {
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
