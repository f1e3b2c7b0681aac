/**
 * Loading a bundled CommonJS file (scripts/bundle-gate-sh.mjs) with the V8 code cache the build wrote
 * beside it (src/script/code-cache.ts): the daemon's ~180 ESM modules cost most of its start
 * (docs/startup.md, "Cold start"). The cache's key is the bundle's build id, on the bundle's first line
 * (`// gate-sh-build <id>`), so a cache from another build is never used. Read only, never written here.
 * Not pure (reads files, runs code); trust: the files are this installation's own build output.
 */
import { readFileSync } from 'node:fs';
import { cacheData, runCommonJs } from '../script/index.js';

/** The build id on the bundle's first line, or '' when there is none. */
export function buildId(source: string): string {
  const m = /^\/\/ gate-sh-build ([0-9a-f]{16,64})\n/.exec(source.slice(0, 100));
  return m ? m[1] : '';
}

/** The bundle's exports, compiled with its code cache when the cache fits; undefined when there is no
 * bundle (a build without esbuild: the caller imports the module graph instead). */
export function loadBundle(bundle: string): unknown {
  let source: string;
  try {
    source = readFileSync(bundle, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return runCommonJs(bundle, source, cacheData(bundle.replace(/\.cjs$/, '.v8cache'), buildId(source)));
}
