/**
 * Programs that run another program inside their own process, without an exec the gate could see: the
 * dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 /bin/rm f` maps rm and jumps to it) and
 * multi-call binaries (`busybox rm f` runs its rm applet). The exec gate decides the program they run as
 * well as themselves (src/decide/intercepted.ts), and pre-flight sees through them as wrappers
 * (src/script/wrapper-grammars.ts).
 * Pure: argv in, argv out.
 */
import { basename } from 'node:path';

/** ld-linux-x86-64.so.2, ld-linux-aarch64.so.1, ld-linux.so.2, ld.so, ld-musl-x86_64.so.1 */
const LOADER = /^ld(-linux(-[\w-]+)?|-musl-[\w-]+)?\.so(\.\d+)*$/;
export const MULTI_CALL: ReadonlySet<string> = new Set(['busybox', 'toybox']);
/** the loader's options that take a value (glibc's ld.so --help) */
const LOADER_ARG = new Set(['--library-path', '--inhibit-rpath', '--audit', '--preload', '--argv0', '--glibc-hwcaps-prepend', '--glibc-hwcaps-mask']);
/** options after which the loader runs nothing */
const LOADER_NO_RUN = new Set(['--list', '--verify', '--help', '--version', '--list-tunables', '--list-diagnostics']);

export function isLoader(name: string): boolean {
  return LOADER.test(name);
}

/** Where the command a loader or multi-call binary runs starts in argv; null when it runs none or is not one. */
export function inProcessStart(argv: readonly string[]): number | null {
  const name = basename(argv[0] ?? '');
  if (MULTI_CALL.has(name)) return argv.length > 1 && !argv[1].startsWith('-') ? 1 : null;
  if (!LOADER.test(name)) return null;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') return i + 1 < argv.length ? i + 1 : null;
    if (LOADER_NO_RUN.has(a)) return null;
    if (LOADER_ARG.has(a)) { i++; continue; }
    if (a.startsWith('--')) continue;
    return i;
  }
  return null;
}

/** The commands run in process, innermost last (`ld.so busybox rm f` → [busybox rm f], [rm f]). */
export function inProcessCommands(argv: readonly string[]): string[][] {
  const out: string[][] = [];
  let cur = argv;
  for (let depth = 0; depth < 8; depth++) {
    const start = inProcessStart(cur);
    if (start === null) break;
    cur = cur.slice(start);
    out.push([...cur]);
  }
  return out;
}
