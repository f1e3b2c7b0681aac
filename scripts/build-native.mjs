// Builds gate-sh's native parts: the exec-time shims and the native entry (shims/: libgate.so, gate-shell,
// gate-sh-native, bin/*) with make, and the N-API addon (build/Release/gate_native.node) with node-gyp. Run
// by `npm install` (the package's `preinstall` script, in a clone and in an installed tarball: before npm
// links the package's bins, whose bin/gate-sh is the native entry) and by `npm run build`.
// All or nothing: when a step fails, the compiler's own message has already gone to stderr; this adds what
// to install, removes what the failed build left (so no half-built tree looks usable) and exits 1, which
// stops `npm install`. GATE_WERROR=1 (set by .ci/run) turns compiler warnings into errors in both builds.
// Trust: runs at install time with the installing user's rights; runs only make, the C compiler and
// node-gyp on the package's own sources.
import { closeSync, existsSync, lstatSync, openSync, readdirSync, rmSync, statSync, symlinkSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADDON = join(ROOT, 'build', 'Release', 'gate_native.node');
const HINT = 'the native parts need make, gcc and python3 (Debian/Ubuntu: apt-get install -y make gcc python3); fix the cause, then run npm install again';

function fail(what) {
  process.stderr.write(`\ngate-sh: ${what}; nothing of gate-sh's native parts is left half-built.\ngate-sh: ${HINT}\n`);
  spawnSync('make', ['-s', '-C', join(ROOT, 'shims'), 'clean'], { stdio: 'ignore' });
  rmSync(join(ROOT, 'build'), { recursive: true, force: true });
  process.exit(1);
}

/** The first of `names` found on PATH, or undefined. */
function onPath(...names) {
  for (const n of names) if (spawnSync('sh', ['-c', `command -v ${n}`], { stdio: 'ignore' }).status === 0) return n;
  return undefined;
}

/**
 * A line for the person waiting on `npm install`: the build takes ~20 s, and npm shows nothing of a
 * dependency's install scripts (a global install of the tarball) unless they fail. To the terminal itself
 * when stderr is npm's pipe; to stderr when there is no terminal (CI) or it is the terminal already.
 */
function say(line) {
  const text = `gate-sh: ${line}\n`;
  if (!process.stderr.isTTY) {
    try {
      const fd = openSync('/dev/tty', 'w');
      writeSync(fd, text);
      closeSync(fd);
      return;
    } catch {
      /* no terminal: stderr */
    }
  }
  process.stderr.write(text);
}
const installing = process.env.npm_lifecycle_event === 'preinstall';
const started = Date.now();
if (installing)
  say(
    'building the native parts: the exec gate (shims/: libgate.so, the launcher, the native gate-sh) with make and gcc, ' +
      'then the N-API addon (native/) with node-gyp; about 20 s',
  );

const missing = [['make'], ['gcc', 'cc'], ['python3']].filter((alts) => !onPath(...alts)).map((alts) => alts[0]);
if (missing.length) fail(`cannot build the native parts: ${missing.join(', ')} not found on PATH`);

const werror = process.env.GATE_WERROR === '1';
const make = spawnSync('make', ['-s', '-C', join(ROOT, 'shims'), ...(werror ? ['-B', 'GATE_WERROR=1'] : [])], { stdio: 'inherit' });
if (make.status !== 0) fail(`building the exec-time shims failed (make -C shims, status ${make.status ?? make.signal}: the compiler's message is above)`);

// npm pack leaves symbolic links out of a tarball: put bin/gate-sh (a link to the native entry) back, so the
// bin npm links next finds its target
const ENTRY = join(ROOT, 'bin', 'gate-sh');
const present = (p) => {
  try {
    return lstatSync(p) !== undefined;
  } catch {
    return false;
  }
};
if (existsSync(join(ROOT, 'bin')) && !present(ENTRY) && existsSync(join(ROOT, 'shims', 'gate-sh-native'))) symlinkSync('../shims/gate-sh-native', ENTRY);

// node-gyp only when the addon is missing or older than its source or build file (a rebuild costs ~10 s)
const mtime = (p) => statSync(join(ROOT, p)).mtimeMs;
// (every file of native/: the addon is built from gate_native.c and the files it names, gate_relay.c among them)
const sources = readdirSync(join(ROOT, 'native')).map((f) => `native/${f}`);
const fresh = existsSync(ADDON) && !werror && statSync(ADDON).mtimeMs > Math.max(...sources.map(mtime), mtime('binding.gyp'));
if (!fresh) {
  // npm's own node-gyp: npm names it in npm_config_node_gyp for lifecycle scripts (`npm install`, `npm run`)
  const gypJs = process.env.npm_config_node_gyp;
  const [cmd, ...pre] = gypJs ? [process.execPath, gypJs] : ['node-gyp'];
  // Node's own headers when it has them (a distribution's node, or `nodedir` in npmrc): no header download
  const prefix = join(dirname(process.execPath), '..');
  const nodedir = !process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
  const gyp = spawnSync(cmd, [...pre, 'rebuild', '--loglevel=error', ...nodedir], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, GATE_WERROR: werror ? '1' : '' },
  });
  if (gyp.error) fail(`cannot run node-gyp (${gyp.error.message}); run this through npm (npm install or npm run build)`);
  if (gyp.status !== 0 || !existsSync(ADDON))
    fail(`building the native addon failed (node-gyp rebuild, status ${gyp.status ?? gyp.signal}: the compiler's message is above)`);
}
if (installing) say(`native parts built in ${Math.round((Date.now() - started) / 1000)} s`);
