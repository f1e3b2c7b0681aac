/**
 * The library a sanitizer test build of the shims must load before libgate.so. `make -C shims
 * SANITIZE=address` builds libgate.so with AddressSanitizer, whose runtime has to be the first library of
 * every process it is loaded into; that build writes the runtime's path to `libgate.preload-first` beside
 * libgate.so, and the exec gate's LD_PRELOAD becomes `<runtime>:<shims>/libgate.so` (exec-gate.ts
 * withPreload). The installed build has no such file, and nothing changes.
 * Reads one file. Trust: the file is in the shims folder, written by the build beside libgate.so itself:
 * whoever can write it can replace the library, so it gives nobody more than they have (a native gate-sh's
 * plan, built by the daemon from the shims folder the client names, is the client's own run, which it execs
 * itself; an escalated run reads the daemon's own folder). It is never taken from the environment, which a
 * gated script sets (LD_PRELOAD's entries before libgate.so would come before the gate's execve). Only an
 * absolute path of an existing file, without
 * the loader's separators (':' and ' '), is taken; anything else is ignored, and a sanitizer build then
 * fails loudly in every gated process (its runtime not first).
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

export const PRELOAD_FIRST_FILE = 'libgate.preload-first';

/** The runtime to preload before `<shimsDir>/libgate.so`, or undefined (every build but the sanitizer one). */
export function preloadFirst(shimsDir: string): string | undefined {
  const file = join(shimsDir, PRELOAD_FIRST_FILE);
  let path: string;
  try {
    // absent in every build but the sanitizer one: asked first without an exception (the daemon plans each
    // native gate-sh's run with this, a thrown ENOENT costs more than the stat)
    if (!statSync(file, { throwIfNoEntry: false })) return undefined;
    path = readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  if (!isAbsolute(path) || /[: \n]/.test(path)) return undefined;
  try {
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}
