// Proposal (needs esbuild as a devDependency, not added yet): bundle gate-sh's hot path into ONE CommonJS
// file. Node 20 has no compile cache; what costs is loading ~22 ESM modules through the ESM loader.
// Measured on the shared 2-core machine, interleaved medians of 30 (gate-sh -c true, warm daemon):
//   node -e 0 147 ms | ESM module graph (today) 246 ms | one ESM bundle 232 ms | one CJS bundle 199 ms
// The bundle sits at dist/cjs-src/cli/ (same depth as dist/src/cli/, so paths computed from
// import.meta.url, e.g. ../../.. = the package root for shims/, still hold); import.meta.url is defined
// from __filename. The native addon (unix-dgram) stays external and loads from node_modules.
// A launcher would then `require('../dist/cjs-src/cli/gate-sh.bundle.cjs').main(argv)`; build it in
// `npm run build` so it can never be older than dist/.
// Usage: node scripts/bundle-gate-sh.mjs   (after npm run build)
import { mkdirSync, writeFileSync } from 'node:fs';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('gate-sh: esbuild is not installed; add it as a devDependency to build the gate-sh bundle');
  process.exit(1);
}
mkdirSync('dist/cjs-src/cli', { recursive: true });
writeFileSync('dist/cjs-src/package.json', '{"type":"commonjs"}\n');
await esbuild.build({
  entryPoints: ['dist/src/cli/gate-sh.js'],
  outfile: 'dist/cjs-src/cli/gate-sh.bundle.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  define: { 'import.meta.url': '__gateMetaUrl' },
  banner: { js: "const __gateMetaUrl = require('url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
console.log('dist/cjs-src/cli/gate-sh.bundle.cjs');
