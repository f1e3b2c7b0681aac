// Bundles gate-sh's hot path into ONE CommonJS file (run by `npm run build`, after tsc). Node 20 has no
// compile cache, and loading ~22 ESM modules through the ESM loader costs ~40 ms of every `gate-sh -c`.
// The bundle sits at dist/cjs-src/cli/ (same depth as dist/src/cli/, so paths computed from
// import.meta.url, e.g. ../../.. = the package root for shims/, still hold); import.meta.url is defined
// from __filename. Every package stays external (native addons load from node_modules); modules gate-sh
// imports lazily (PTY host, interactive shell, autostart) stay lazy inside the bundle.
//
// gate-sh's bundle also gets a V8 code cache (gate-sh.bundle.v8cache, read by bin/gate-sh): its first line
// is the bundle's build id (a hash of the bundle, also on the bundle's first line), so a cache left from
// another build is never used. It holds the functions of gate-sh's hot path, compiled by training runs
// (scripts/gate-sh-code-cache.cjs). Built here only, never written at run time.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { resolve as resolvePath } from 'node:path';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('gate-sh: esbuild is not installed; add it as a devDependency to build the gate-sh bundle');
  process.exit(1);
}
mkdirSync('dist/cjs-src/cli/commands', { recursive: true });
writeFileSync('dist/cjs-src/package.json', '{"type":"commonjs"}\n');

// gate-sh's own modules (dist/src/) have no import-time side effects, and none is imported for them: each
// layer's index.ts re-exports its public surface, and this lets esbuild drop the modules a bundle imports
// through an index without using (an index would otherwise pull its whole layer into every bundle).
const OWN = resolvePath('dist/src') + '/';
const ownModulesPure = {
  name: 'own-modules-pure',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, async ({ path, kind, resolveDir, importer, pluginData }) => {
      if (pluginData?.ownModulesPure) return undefined;
      const r = await build.resolve(path, { kind, resolveDir, importer, pluginData: { ownModulesPure: true } });
      if (r.errors.length > 0 || !r.path.startsWith(OWN)) return r.errors.length > 0 ? { errors: r.errors } : undefined;
      return { path: r.path, namespace: r.namespace, sideEffects: false };
    });
  },
};

const options = (entry) => ({
  plugins: [ownModulesPure],
  entryPoints: [entry],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  define: { 'import.meta.url': '__gateMetaUrl' },
  banner: { js: "const __gateMetaUrl = require('url').pathToFileURL(__filename).href;" },
  // import() of a package becomes require(): bin/gate-sh compiles the bundle with vm.Script, which has no
  // loader for a dynamic import
  supported: { 'dynamic-import': false },
  packages: 'external',
  logLevel: 'warning',
});

// `gate policy` (its check is measured against node -e 0 too): required as is by the dispatcher
await esbuild.build({ ...options('dist/src/cli/commands/policy.js'), outfile: 'dist/cjs-src/cli/commands/policy.bundle.cjs' });

/** The last line of a child's stderr (or its spawn error), for a build note. */
const why = (r) => (r.stderr || r.error?.message || '').trim().split('\n').pop();

/**
 * One bundle of an entry point, at the depth of dist/src/<folder>/ (paths from import.meta.url hold), with
 * its V8 code cache: trained on real runs (scripts/gate-sh-code-cache.cjs, kind `trained`), or where no
 * daemon can run here every function compiled eagerly; a failure of both costs speed only. Never a cache
 * next to a bundle it was not made from.
 */
async function cachedBundle({ entry, bundle, cache, kind, name, slower, packages = 'external' }) {
  mkdirSync(bundle.slice(0, bundle.lastIndexOf('/')), { recursive: true });
  rmSync(cache, { force: true });
  const built = await esbuild.build({ ...options(entry), packages, write: false });
  const text = built.outputFiles[0].text;
  const id = createHash('sha256').update(text).digest('hex').slice(0, 32);
  writeFileSync(bundle, `// gate-sh-build ${id}\n${text}`);
  const make = (k) =>
    spawnSync(process.execPath, ['scripts/gate-sh-code-cache.cjs', k, bundle, cache, id], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    });
  let r = make(kind);
  if (r.status !== 0) {
    console.error(`gate-sh: note: the code cache of ${name} is not trained (${why(r)}); caching every function instead`);
    r = make('eager');
  }
  if (r.status !== 0) {
    rmSync(cache, { force: true });
    console.error(`gate-sh: warning: no code cache for ${name} (${why(r)}); ${slower}`);
  }
}

// gate-sh itself (bin/gate-sh-node)
await cachedBundle({
  entry: 'dist/src/cli/gate-sh.js',
  bundle: 'dist/cjs-src/cli/gate-sh.bundle.cjs',
  cache: 'dist/cjs-src/cli/gate-sh.bundle.v8cache',
  kind: 'trained',
  name: 'the gate-sh bundle',
  slower: 'gate-sh starts a little slower',
});

// The daemon (`gate daemon run`, src/cli/gate.ts loads it through src/cli/code-cache.ts), trained on a daemon
// run. Its module graph costs most of an autostart's wait (docs/startup.md, "Cold start").
await cachedBundle({
  entry: 'dist/src/cli/commands/daemon.js',
  bundle: 'dist/cjs-src/daemon/daemon.bundle.cjs',
  cache: 'dist/cjs-src/daemon/daemon.bundle.v8cache',
  kind: 'daemon',
  name: 'the daemon bundle',
  slower: 'the daemon starts a little slower',
});

// `gate hook` (src/cli/commands/hook.ts, loaded by bin/gate): an agent starts it before every shell command,
// so it gets gate-sh's treatment, trained on hook answers from a real daemon (allow, deny, ask; both agents).
await cachedBundle({
  entry: 'dist/src/cli/commands/hook.js',
  bundle: 'dist/cjs-src/cli/hook.bundle.cjs',
  cache: 'dist/cjs-src/cli/hook.bundle.v8cache',
  kind: 'hook',
  name: 'the hook bundle',
  slower: 'gate hook starts a little slower',
});

// `gate`'s yargs program (src/cli/gate-cli.ts, loaded by src/cli/gate.ts for the commands a person types): yargs,
// its dependencies and the command declarations in one file (yargs' ~40 ESM modules cost more than its work), every function
// compiled (its work is parsing and help, the same for every command). The commands' own code stays out: the
// program loads it through gate.ts when a command runs.
await cachedBundle({
  entry: 'dist/src/cli/gate-cli.js',
  bundle: 'dist/cjs-src/cli/gate-cli.bundle.cjs',
  cache: 'dist/cjs-src/cli/gate-cli.bundle.v8cache',
  kind: 'eager',
  name: 'the gate CLI bundle',
  slower: 'gate starts a little slower',
  packages: 'bundle', // yargs and its parts inside (all plain JavaScript)
});

// The parsers' code caches (src/script/mvdan.ts, src/script/bash-parser-call.ts): the daemon compiles
// mvdan-sh (1.5 MB) at every start, and bash-parser (87 files) at its first request; bash-parser's parts
// are bundled into one file first (scripts/bash-parser-entry.cjs).
{
  const BP = 'dist/cjs-src/bash-parser.bundle.cjs';
  rmSync('dist/cjs-src/bash-parser.bundle.v8cache', { force: true });
  const bp = await esbuild.build({
    entryPoints: ['scripts/bash-parser-entry.cjs'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'warning',
  });
  const bpText = bp.outputFiles[0].text;
  const bpId = createHash('sha256').update(bpText).digest('hex').slice(0, 32);
  writeFileSync(BP, `// gate-sh-build ${bpId}\n${bpText}`);
  const runs = [
    ['mvdan-sh', ['mvdan', 'dist/cjs-src/mvdan-sh.v8cache'], 'dist/cjs-src/mvdan-sh.v8cache'],
    ['bash-parser', ['bash-parser', BP, 'dist/cjs-src/bash-parser.bundle.v8cache', bpId], 'dist/cjs-src/bash-parser.bundle.v8cache'],
  ];
  for (const [name, args, file] of runs) {
    const r = spawnSync(process.execPath, ['scripts/parser-code-cache.cjs', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (r.status !== 0) {
      rmSync(file, { force: true });
      console.error(`gate-sh: warning: no code cache for ${name} (${why(r)}); the daemon starts a little slower`);
    }
  }
}
