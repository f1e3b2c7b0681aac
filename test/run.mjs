// Runs the compiled test files (dist/test/**/*.test.js) with node:test. Two kinds, told apart by where they live:
//   unit    test/unit/, mirroring src/ (test/unit/<src folder>/<file>.test.ts): pure, no daemon, no bwrap, no child
//           process, no listening socket (test/unit/no-processes.mjs is preloaded and fails a test that starts
//           one); the files are imported into one process per core (a suite per file: loading the module graph
//           once per process instead of once per file is most of a unit file's cost), seconds. `npm run
//           test:unit`, or `node test/run.mjs --unit`.
//   system  every other folder of test/: real daemons, sockets, bash, bubblewrap and gate-sh; a node --test run
//           per file, GATE_TEST_CONCURRENCY of them side by side, the longest files first (LONGEST below);
//           minutes. `npm run test:system`, or `node test/run.mjs --system`.
// With neither flag both run, unit first (`npm test`). Extra args filter by path substring. A compiled file
// whose test/ source is gone (moved or deleted; tsc leaves dist/ behind) is not run.
// A test file that hangs fails by name after GATE_TEST_TIMEOUT_S (default 600 s: node's --test-timeout
// bounds each file's run) and the other files go on; a watchdog (GATE_TEST_WATCHDOG_S, default 1500 s)
// kills the whole run if it still hangs: CI fails, it never stalls.
// Before system tests run, the programs they use are looked for (README "Prerequisites"): when one is
// missing the run stops at once with the list and the apt-get line (GATE_TEST_NO_PREREQS=1 skips the check).
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
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
  ['clang-format', 'clang-format'],
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

function walk(dir, out = []) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const args = process.argv.slice(2);
const kinds = args.includes('--unit') ? ['unit'] : args.includes('--system') ? ['system'] : ['unit', 'system'];
const filters = args.filter((a) => a !== '--unit' && a !== '--system');
// test/realwork (real builds, installs and test suites side by side with bash: minutes), the load tests
// of test/security/dos (20,000 connections, floods: minutes) and the package's install from its tarball
// (scripts/pack-install: npm compiles node-pty, unix-dgram and every shim, about a minute of CPU) run on their
// own, `npm run test:realwork`, `test:load` and `test:package` (all in .ci/run), unless named
const apart = ['/realwork/', '/security/dos.test.js', '/scripts/pack-install.test.js'];
const UNIT = join('dist', 'test', 'unit') + '/';
const selected = walk(join('dist', 'test'))
  .filter((f) => existsSync(f.replace(/^dist\//, '').replace(/\.js$/, '.ts')))
  .filter((f) => (filters.length === 0 ? !apart.some((a) => f.includes(a)) : filters.some((x) => f.includes(x))))
  .sort();
// The system files that run longest (measured in npm test at three at a time: 28 to 93 s each), started first so
// that files running side by side end together instead of one long file running alone at the end. Order only: a file missing here
// or gone from the tree changes nothing else.
const LONGEST = [
  'exec-gate/kernel',
  'sandbox/session',
  'network/through-proxy',
  'rules/differential',
  'docs/commands',
  'exec-gate/toctou',
  'shell/native-parity',
  'integrations/mcp',
  'sandbox/strict',
  'daemon/robustness',
  'scripts/build-native',
  'security/client-folders',
  'decide/explain',
  'shell/agent-wrappers',
];
// The unit files whose tests take seconds of CPU (generated scripts, oracles): spread over the unit groups first.
const HEAVY_UNITS = ['script/bash-parser-call', 'script/opaque-kind', 'script/bad-input', 'decide/codex-differential', 'rules/starlark'];
const rank = (f) => {
  const i = LONGEST.findIndex((l) => f.endsWith(`/${l}.test.js`));
  return i < 0 ? LONGEST.length : i;
};
const byKind = {
  unit: selected.filter((f) => f.startsWith(UNIT)),
  system: selected.filter((f) => !f.startsWith(UNIT)).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1)),
};
if (kinds.every((k) => byKind[k].length === 0)) {
  console.error(`no ${kinds.length === 1 ? `${kinds[0]} ` : ''}test files found under dist/test${filters.length ? ` matching ${filters.join(', ')}` : ''}`);
  process.exit(1);
}
// the programs the system tests use (README "Prerequisites"); unit tests need none
if (kinds.includes('system') && byKind.system.length > 0 && process.env.GATE_TEST_NO_PREREQS !== '1') {
  const missing = PREREQS.filter(([, name, abs]) => !onPath(name) && !(abs && executable(abs)));
  if (missing.length) {
    console.error(`test/run.mjs: the tests need programs this machine lacks: ${missing.map(([pkg, name]) => `${name} (${pkg})`).join(', ')}`);
    console.error(`install them (Debian/Ubuntu): sudo apt-get install -y ${PREREQS.map(([pkg]) => pkg).join(' ')}`);
    console.error('nothing ran (GATE_TEST_NO_PREREQS=1 runs the suites anyway)');
    process.exit(1);
  }
}

const limit = Number(process.env.GATE_TEST_WATCHDOG_S || 1500);
const perFile = Number(process.env.GATE_TEST_TIMEOUT_S || 600);
// system test files four at a time (GATE_TEST_CONCURRENCY=1: one at a time). On this 2-core machine npm test took
// 10 min 5 s at three (the cores 79 % busy: files wait on daemons, sandboxes and servers) and 9 min 37 s at four
// (2026-11-28, docs/history/). Side by side, one file's host sockets come and go while another's commands join a session
// sandbox: a command whose held mounts changed between gate-launch's two looks now falls back to bubblewrap
// (shims/gate-join.c). Unit test files share nothing: they run in one process per core (runUnit).
const systemConcurrency = Math.max(1, Number(process.env.GATE_TEST_CONCURRENCY || 4));
const NO_PROCESSES = new URL('./unit/no-processes.mjs', import.meta.url).href;

const children = new Set();
const killAll = () => {
  for (const c of children)
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {}
};
// The test processes' PATH without pyenv's folders: its python3 is a bash script that runs pyenv to choose a
// python (1-3 s a start on this machine instead of 0.15 s for Debian's, the README's prerequisite), and under
// the exec gate each of its execs is gated too. Tests of a version manager's shim make one of their own
// (test/integrations/agents/setup.test.ts).
const testEnv = { ...process.env, PATH: (process.env.PATH ?? '').split(delimiter).filter((d) => !/\/\.pyenv\//.test(`${d}/`)).join(delimiter) };

// GNU time, when the machine has it, measures each system file's CPU (its processes and every descendant they
// waited for: the daemons and commands a test starts), printed beside its wall time: on 2 cores the suite's
// time is bound by CPU, so that is the figure to cut. Without it nothing else changes.
const TIME = executable('/usr/bin/time') ? '/usr/bin/time' : undefined;
const cpuOf = (file) => {
  try {
    const [u, s] = readFileSync(file, 'utf8').trim().split(/\s+/).slice(-2).map(Number);
    return Number.isFinite(u + s) ? `, ${(u + s).toFixed(1)} s of CPU` : '';
  } catch {
    return '';
  }
};

/** One node --test run over files, in its own process group so the watchdog can take every test process and
 * daemon down with it. Resolves to its exit code, when `capture` its output, and with `cpuFile` its CPU
 * measured by GNU time into that file. */
function runFiles(kind, files, capture = false, cpuFile = undefined) {
  const concurrency = kind === 'unit' ? availableParallelism() : 1;
  const preload = kind === 'unit' ? ['--import', NO_PROCESSES] : [];
  const args = [...preload, '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, `--test-timeout=${perFile * 1000}`, ...files];
  const [program, argv] = cpuFile ? [TIME, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(program, argv, {
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: testEnv,
    detached: true,
  });
  children.add(child);
  let out = '';
  if (capture) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => (out += d));
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), out });
    }),
  );
}

/**
 * Unit files in one group per core: each group is a file that imports its unit files, each inside a suite named
 * after it (a failure still names its file), so node:test runs one process per group instead of one per file.
 * Heavy files first, each to the lightest group. The groups live in a temporary folder removed afterwards.
 */
async function runUnit(files) {
  const dir = mkdtempSync(join(tmpdir(), 'gate-unit-'));
  try {
    const groups = Array.from({ length: Math.min(availableParallelism(), files.length) }, () => ({ weight: 0, files: [] }));
    const weight = (f) => (HEAVY_UNITS.some((h) => f.endsWith(`/${h}.test.js`)) ? 20 : 1);
    for (const f of [...files].sort((a, b) => weight(b) - weight(a))) {
      const g = groups.reduce((min, x) => (x.weight < min.weight ? x : min));
      g.weight += weight(f);
      g.files.push(f);
    }
    const paths = groups.map((g, i) => {
      const lines = [...g.files].sort().map((f) => {
        const name = JSON.stringify(f.slice(UNIT.length));
        return `describe(${name}, async () => { await import(${JSON.stringify(pathToFileURL(resolve(f)).href)}); });`;
      });
      const path = join(dir, `unit-group-${i + 1}.test.mjs`);
      writeFileSync(path, `import { describe } from 'node:test';\n${lines.join('\n')}\n`);
      return path;
    });
    return (await runFiles('unit', paths)).code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** System files: GATE_TEST_CONCURRENCY node --test runs side by side, one file each, the longest first (node
 * sorts the files it is given, so it cannot be told that order); each file's output printed whole when it
 * ends, then the counts of all. Resolves to 0 when every file passed. */
async function runSystem(files) {
  console.error(`test/run.mjs: ${files.length} system test file${files.length === 1 ? '' : 's'}, ${systemConcurrency} at a time`);
  const queue = [...files];
  const sum = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  const bad = [];
  const cpuDir = TIME ? mkdtempSync(join(tmpdir(), 'gate-cpu-')) : undefined;
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) {
      const start = Date.now();
      const cpuFile = cpuDir ? join(cpuDir, `${basename(f)}-${start}`) : undefined;
      const { code, out } = await runFiles('system', [f], true, cpuFile);
      process.stdout.write(out.replace(/\n?$/, '\n'));
      const cpu = cpuFile ? cpuOf(cpuFile) : '';
      console.log(`test/run.mjs: ${f}: ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - start) / 1000).toFixed(1)} s${cpu}`);
      for (const k of Object.keys(sum)) sum[k] += Number(new RegExp(`^ℹ ${k} (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
      if (code !== 0) bad.push(f);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(systemConcurrency, files.length) }, worker));
  } finally {
    if (cpuDir) rmSync(cpuDir, { recursive: true, force: true });
  }
  console.log(`\nsystem: ${Object.entries(sum).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (bad.length) console.log(`system files failed (${bad.length}):\n${bad.map((f) => `  ${f}`).join('\n')}`);
  return bad.length ? 1 : 0;
}

const watchdog = setTimeout(() => {
  console.error(`\ntest watchdog: the suite ran longer than ${limit} s; killing it (a test is hanging)`);
  killAll();
  process.exit(1);
}, limit * 1000);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => (killAll(), process.exit(130)));
const failed = [];
for (const kind of kinds) {
  const files = byKind[kind];
  if (files.length === 0) continue;
  if (kind === 'unit') console.error(`test/run.mjs: ${files.length} unit test file${files.length === 1 ? '' : 's'}`);
  const code = kind === 'unit' ? await runUnit(files) : await runSystem(files);
  if (code !== 0) failed.push(kind);
}
clearTimeout(watchdog);
if (failed.length) console.error(`test/run.mjs: ${failed.join(' and ')} tests failed`);
process.exit(failed.length ? 1 : 0);
