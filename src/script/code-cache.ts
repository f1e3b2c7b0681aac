/**
 * Compiling a CommonJS file with a V8 code cache written at build time (Node 20 has no compile cache of its
 * own): the daemon's bundle (src/cli/code-cache.ts) and mvdan-sh, 1.5 MB of GopherJS that took 67-146 ms to
 * compile at every daemon start (docs/startup.md, "Cold start"). The cache file starts with a key line;
 * it is used only when the key is the one expected for the source, because V8 itself checks only the
 * source's length. V8 checks the rest (its version, flags) and compiles normally when it rejects the data.
 * Not pure (reads files, runs the module); trust: both files are this installation's own.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';

/** The cache's data when its first line is `key`; undefined when it is missing or for something else. */
export function cacheData(cacheFile: string, key: string): Buffer | undefined {
  if (!key) return undefined;
  let buf: Buffer;
  try {
    buf = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const nl = buf.indexOf(10);
  return nl > 0 && buf.toString('latin1', 0, nl) === key ? buf.subarray(nl + 1) : undefined;
}

/** Run `source` as the CommonJS module `file` (as require would), compiled with `cached` when given. */
export function runCommonJs(file: string, source: string, cached: Buffer | undefined): unknown {
  const script = new vm.Script((Module as unknown as { wrap(s: string): string }).wrap(source), { filename: file, cachedData: cached });
  const mod = { exports: {} as unknown };
  (script.runInThisContext() as (...a: unknown[]) => void).call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  return mod.exports;
}
