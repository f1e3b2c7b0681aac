// Bundles gate-sh's hot path into ONE CommonJS file (run by `npm run build`, after tsc). Node 20 has no
// compile cache, and loading ~22 ESM modules through the ESM loader costs ~40 ms of every `gate-sh -c`.
// The bundle sits at dist/cjs-src/cli/ (same depth as dist/src/cli/, so paths computed from
// import.meta.url, e.g. ../../.. = the package root for shims/, still hold); import.meta.url is defined
// from __filename. Every package stays external (native addons load from node_modules); modules gate-sh
// imports lazily (PTY host, interactive shell, autostart) stay lazy inside the bundle.
import { mkdirSync, writeFileSync } from 'node:fs';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('gate-sh: esbuild is not installed; add it as a devDependency to build the gate-sh bundle');
  process.exit(1);
}
mkdirSync('dist/cjs-src/cli/commands', { recursive: true });
writeFileSync('dist/cjs-src/package.json', '{"type":"commonjs"}\n');
// gate-sh, and `gate policy` (its check is measured against node -e 0 too); same folder depths as dist/src/
const entries = [
  ['dist/src/cli/gate-sh.js', 'dist/cjs-src/cli/gate-sh.bundle.cjs'],
  ['dist/src/cli/commands/policy.js', 'dist/cjs-src/cli/commands/policy.bundle.cjs'],
];
for (const [entry, outfile] of entries)
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    define: { 'import.meta.url': '__gateMetaUrl' },
    banner: { js: "const __gateMetaUrl = require('url').pathToFileURL(__filename).href;" },
    packages: 'external',
    logLevel: 'warning',
  });
